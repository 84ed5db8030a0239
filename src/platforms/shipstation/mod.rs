//! ShipStation warehouses (`shipstation`, API V2), as `spec/platforms/shipstation.md` says: the
//! adapter's rules, the ping (List or Get Warehouse), and the client a pass drives (orders
//! created in batches under their `external_shipment_id`, labels read by ShipStation's own
//! creation time, cancellations, available stock from the Inventory API). Every request goes
//! under `/v2/` with the API key in the `api-key` header, and no message ever carries it.

mod client;
mod labels;
mod orders;
mod transport;
mod wire;

use async_trait::async_trait;
use serde_json::Value;

use super::seam::{Known, Platform, WarehousePlatform, WarehouseSide};
use super::warehouse::WarehouseSettings;
use super::{Adapter, PingError, PlatformError, Settings};
use crate::fields::Fields;

pub const NAME: &str = "ShipStation";

/// The units the adapter's `weight_unit` may name (the file's `weight_unit`).
pub const WEIGHT_UNITS: [&str; 4] = ["pound", "ounce", "gram", "kilogram"];

/// ShipStation as the registry knows it.
pub struct ShipStation;

/// ShipStation in the registry.
pub const PLATFORM: Known<dyn WarehousePlatform> = Known { name: NAME, validate, platform: &ShipStation };

/// A ShipStation id as the file's `se_id` writes it: `^se(-[a-z0-9]+)+$`, at most 25
/// characters.
pub fn is_se_id(text: &str) -> bool {
    text.len() <= 25
        && text.strip_prefix("se").is_some_and(|rest| {
            !rest.is_empty()
                && rest.split('-').skip(1).all(|part| {
                    !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                })
                && rest.starts_with('-')
        })
}

/// The adapter's rules (annex §2).
pub fn validate(adapter: &mut Fields) {
    // A file warehouse's layouts mean nothing here: named rather than ignored.
    crate::platforms::files::layout::refuse_on_api_warehouse(adapter);
    adapter.required("access_token", Fields::text);
    adapter.read("reference_prefix", |v| match v {
        Value::String(s)
            if s.chars().count() <= 20
                && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) =>
        {
            Ok(())
        }
        _ => Err("must be at most 20 characters, each a letter, digit, '-', '_' or '.'".to_string()),
    });
    for key in ["warehouse_id", "carrier_id"] {
        adapter.read(key, |v| match v {
            Value::String(s) if is_se_id(&s) => Ok(()),
            _ => Err("must be a ShipStation id such as se-1001 (at most 25 characters)".to_string()),
        });
    }
    adapter.read("weight_unit", |v| match v {
        Value::String(s) if WEIGHT_UNITS.contains(&s.as_str()) => Ok(()),
        _ => Err("must be one of pound, ounce, gram, kilogram".to_string()),
    });
    adapter.read("inventory_warehouse_id", |v| match v {
        Value::String(s) if !s.trim().is_empty() => Ok(()),
        _ => Err("must be a non-blank string".to_string()),
    });
}

#[async_trait]
impl Platform for ShipStation {
    /// List Warehouses, or Get Warehouse for the adapter's `warehouse_id` (annex §3).
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        let api = transport::Api::new(settings, adapter, None)?;
        let warehouse = adapter.get("warehouse_id").and_then(Value::as_str);
        api.ping(warehouse).await.map_err(PingError::from)
    }
}

impl WarehousePlatform for ShipStation {
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
    fn the_adapter_needs_a_key_and_names_each_bad_key() {
        assert!(problems(json!({"access_token": "key"})).is_empty());
        assert!(
            problems(json!({"access_token": "key", "reference_prefix": "a.B_-1", "warehouse_id": "se-277",
                            "carrier_id": "se-1001", "weight_unit": "ounce", "inventory_warehouse_id": "iw-1"}))
            .is_empty()
        );
        assert_eq!(problems(json!({})), ["access_token"]);
        assert_eq!(problems(json!({"access_token": " "})), ["access_token"]);
        assert_eq!(problems(json!({"access_token": 7})), ["access_token"]);
        assert_eq!(
            problems(json!({"access_token": "k", "reference_prefix": "x".repeat(21)})),
            ["reference_prefix"]
        );
        assert_eq!(
            problems(json!({"access_token": "k", "reference_prefix": "no space"})),
            ["reference_prefix"]
        );
        for bad in [
            json!("277"),
            json!("se-"),
            json!("se-ABC"),
            json!("se--1"),
            json!(277),
            json!(format!("se-{}", "1".repeat(23))),
        ] {
            assert_eq!(
                problems(json!({"access_token": "k", "warehouse_id": bad})),
                ["warehouse_id"],
                "{bad}"
            );
            assert_eq!(problems(json!({"access_token": "k", "carrier_id": bad})), ["carrier_id"], "{bad}");
        }
        assert_eq!(problems(json!({"access_token": "k", "weight_unit": "lb"})), ["weight_unit"]);
        assert_eq!(
            problems(json!({"access_token": "k", "inventory_warehouse_id": ""})),
            ["inventory_warehouse_id"]
        );
    }

    #[test]
    fn se_ids_are_the_files_pattern() {
        for good in ["se-1", "se-277-a9", "se-abc"] {
            assert!(is_se_id(good), "{good}");
        }
        for bad in ["se", "se1", "se-", "se-A", "xse-1", "se-1-", "se-12345678901234567890123"] {
            assert!(!is_se_id(bad), "{bad}");
        }
    }
}

#[cfg(test)]
mod client_tests;
