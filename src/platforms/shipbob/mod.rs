//! ShipBob warehouses (`shipbob`), as `spec/platforms/shipbob.md` says: the adapter's rules, the
//! ping (Get Channels), and the client a pass drives (orders created under their reference,
//! shipments read by ShipBob's tracking time, cancellations, fulfillable stock). Every path is
//! under ShipBob's pinned API version; every request carries the Personal Access Token as a
//! bearer token, and no message ever carries it.

mod client;
mod orders;
mod shipments;
mod transport;
mod wire;

use async_trait::async_trait;
use serde_json::Value;

use super::seam::{Known, Platform, WarehousePlatform, WarehouseSide};
use super::warehouse::WarehouseSettings;
use super::{Adapter, PingError, PlatformError, Settings};
use crate::fields::Fields;

pub use transport::VERSION;

pub const NAME: &str = "ShipBob";

/// ShipBob as the registry knows it.
pub struct ShipBob;

/// ShipBob in the registry.
pub const PLATFORM: Known<dyn WarehousePlatform> = Known { name: NAME, validate, platform: &ShipBob };

/// The adapter's rules (annex §1).
pub fn validate(adapter: &mut Fields) {
    // A file warehouse's layouts mean nothing here: named rather than ignored.
    crate::platforms::files::layout::refuse_on_api_warehouse(adapter);
    adapter.required("access_token", Fields::text);
    adapter.read("channel_id", |v| {
        channel_id(&v).ok_or_else(|| "must be a positive whole number below 2147483648".to_string())
    });
    adapter.read("reference_prefix", |v| match v {
        Value::String(s)
            if s.chars().count() <= 40
                && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) =>
        {
            Ok(())
        }
        _ => Err("must be at most 40 characters, each a letter, digit, '-', '_' or '.'".to_string()),
    });
    adapter.read("shipping_method", |v| match v {
        Value::String(s) if !s.trim().is_empty() => Ok(()),
        _ => Err("must be a non-blank string".to_string()),
    });
    adapter.read("shipping_methods", |v| {
        let blank = |s: &str| s.trim().is_empty();
        match v {
            Value::Object(map)
                if map.iter().all(|(k, v)| !blank(k) && v.as_str().is_some_and(|v| !blank(v))) =>
            {
                Ok(())
            }
            _ => Err("must be an object mapping non-blank names to non-blank names".to_string()),
        }
    });
}

/// A channel id as the adapter may give it: an integer or a digit string, 1 to 2^31 - 1.
fn channel_id(value: &Value) -> Option<i64> {
    let n = match value {
        Value::Number(n) => n.as_i64()?,
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok()?,
        _ => return None,
    };
    (1..i64::from(i32::MAX) + 1).contains(&n).then_some(n)
}

#[async_trait]
impl Platform for ShipBob {
    /// Get Channels: the token works and has a channel that may create orders (annex §2).
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        let api = transport::Api::new(settings, adapter, None)?;
        let wanted = adapter.get("channel_id").and_then(channel_id);
        api.ping_channel(wanted).await.map_err(PingError::from)
    }
}

impl WarehousePlatform for ShipBob {
    fn client(&self, adapter: &Adapter, with: &WarehouseSettings) -> Result<WarehouseSide, PlatformError> {
        Ok(Box::new(client::Client::new(adapter, with)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keys named, without `adapter[…]`.
    fn problems(adapter: Value) -> Vec<String> {
        let named = crate::fields::adapter_problems(validate, adapter);
        named.into_iter().map(|(key, _)| key["adapter[".len()..key.len() - 1].to_string()).collect()
    }

    #[test]
    fn the_adapter_needs_a_token_and_names_each_bad_key() {
        assert!(problems(json!({"access_token": "pat"})).is_empty());
        assert!(
            problems(json!({"access_token": "pat", "channel_id": "128944", "reference_prefix": "a.B_-1",
                                "shipping_method": "Standard", "shipping_methods": {"Express": "2-Day"}}))
            .is_empty()
        );
        assert_eq!(problems(json!({})), ["access_token"]);
        assert_eq!(problems(json!({"access_token": 7})), ["access_token"]);
        for bad in [json!(0), json!(-3), json!(2147483648_i64), json!("12a"), json!(1.5), json!(true)] {
            assert_eq!(problems(json!({"access_token": "p", "channel_id": bad})), ["channel_id"], "{bad}");
        }
        assert_eq!(
            problems(json!({"access_token": "p", "reference_prefix": "no spaces"})),
            ["reference_prefix"]
        );
        assert_eq!(
            problems(json!({"access_token": "p", "reference_prefix": "x".repeat(41)})),
            ["reference_prefix"]
        );
        assert_eq!(problems(json!({"access_token": "p", "shipping_method": " "})), ["shipping_method"]);
        assert_eq!(
            problems(json!({"access_token": "p", "shipping_methods": {"a": ""}})),
            ["shipping_methods"]
        );
        assert_eq!(problems(json!({"access_token": "p", "shipping_methods": []})), ["shipping_methods"]);
    }
}

#[cfg(test)]
mod client_tests;
