//! A store's or warehouse's `platform` and `adapter` (CONTRACT §4, §6, §8): the platform
//! token, masking of secrets in every response, and PATCH's merge of secrets sent back
//! masked. What a platform's adapter must hold and how its credentials are checked belongs
//! to its module under `platforms`; this module dispatches there.

use serde_json::{Map, Value};

use crate::config::{Config, PingMode};
use crate::http::api::{ApiResult, NoContent};
use crate::http::body::{Fields, Patch};
use crate::http::error::ApiError;
use crate::platforms::reach::Reach;
use crate::platforms::{self, PingError, address_of, validate};

pub use crate::platforms::Owner;

/// What replaces a secret in responses.
pub const MASK: &str = "********";

/// A platform name and its adapter, validated together.
#[derive(Debug, Clone)]
pub struct Adapter {
    pub platform: String,
    pub settings: Map<String, Value>,
}

impl Adapter {
    /// Reads the required `platform` and `adapter` of a create (or ping) body.
    pub fn read(fields: &mut Fields, owner: Owner) -> Option<Adapter> {
        let platform = fields.required("platform", read_snake_case);
        let settings = fields.required("adapter", Fields::object);
        let (platform, settings) = (platform?, settings?);
        validate(fields, owner, &platform, &settings);
        Some(Adapter { platform, settings })
    }

    /// Reads the `platform` and `adapter` columns at `index` and `index + 1`, unmasked.
    pub fn from_columns(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Adapter> {
        Ok(Adapter { platform: row.get(index)?, settings: settings_from_column(row, index + 1)? })
    }

    pub fn settings_json(&self) -> String {
        Value::Object(self.settings.clone()).to_string()
    }

    /// Asks the platform whether these credentials authenticate (CONTRACT §8), connecting
    /// only within `reach` (CONTRACT §6). Offline mode stops after validation, which the
    /// caller has already done.
    pub async fn ping(&self, config: &Config, owner: Owner, reach: Reach) -> ApiResult<NoContent> {
        if config.ping_mode == PingMode::Offline {
            return Ok(NoContent);
        }
        let settings = platforms::Settings { reach, ..platforms::Settings::from_config(config) };
        let outcome = match owner {
            Owner::Store => platforms::check_store(&settings, &self.platform, &self.settings).await,
            Owner::Warehouse => platforms::check_warehouse(&settings, &self.platform, &self.settings).await,
        };
        outcome.map(|()| NoContent).map_err(|e| match e {
            PingError::AuthenticationFailed(reason) => ApiError::AdapterAuthenticationFailed(reason),
            PingError::Unreachable(reason) => ApiError::AdapterUnreachable(reason),
            // The address passed the check before the ping and resolved elsewhere at connect time.
            PingError::NotAllowed(reason) => {
                let field = address_of(owner, &self.platform, &self.settings).map_or("adapter", |a| a.field);
                ApiError::invalid(field, reason)
            }
            PingError::UnsupportedPlatform => ApiError::UnsupportedPlatform(format!(
                "No live credential check exists for platform '{}'; set ping_mode = \"offline\" to validate only.",
                self.platform
            )),
        })
    }
}

pub use crate::db::settings_from_column;

/// A PATCH of `platform` and/or `adapter`.
#[derive(Debug, Default, Clone)]
pub struct AdapterPatch {
    platform: Option<String>,
    settings: Option<Map<String, Value>>,
}

impl AdapterPatch {
    pub fn read(fields: &mut Fields) -> AdapterPatch {
        AdapterPatch {
            platform: fields.not_null("platform", read_snake_case),
            settings: fields.not_null("adapter", Fields::object),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.platform.is_none() && self.settings.is_none()
    }

    /// The platform and adapter after this patch, validated together against the stored ones.
    /// A secret sent back in its masked form (as a GET returned it) keeps the stored value.
    pub fn resolve(self, owner: Owner, stored: Adapter) -> ApiResult<Adapter> {
        let platform = self.platform.unwrap_or(stored.platform);
        let settings = match self.settings {
            Some(mut settings) => {
                keep_masked_secrets(&mut settings, &stored.settings);
                settings
            }
            None => stored.settings,
        };
        let mut fields = Fields::new(Map::new());
        validate(&mut fields, owner, &platform, &settings);
        fields.finish()?;
        Ok(Adapter { platform, settings })
    }
}

/// A snake_case token: `^[a-z][a-z0-9_]*$`.
pub fn is_platform_token(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Reads a snake_case token field (`platform`, and a connection's `connection_type`).
pub fn read_snake_case(fields: &mut Fields, key: &str) -> Patch<String> {
    match fields.text(key) {
        Patch::Value(s) if !s.is_empty() && !is_platform_token(&s) => {
            fields.error(key, "must be a snake_case token: a lowercase letter, then a-z, 0-9 or _");
            Patch::Absent
        }
        other => other,
    }
}

pub use crate::db::secrets::is_secret_key;

/// A secret as responses show it: the mask plus its last 4 characters, or the mask alone
/// when the value is 8 characters or shorter.
pub fn mask_secret(value: &str) -> String {
    let count = value.chars().count();
    if count <= 8 {
        return MASK.to_string();
    }
    let tail: String = value.chars().skip(count - 4).collect();
    format!("{MASK}{tail}")
}

/// A URL with the password of its user info masked: `sftp://u:********@host/path`.
pub fn mask_url_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else { return url.to_string() };
    let start = scheme_end + 3;
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else { return url.to_string() };
    match url[start..at].find(':') {
        Some(colon) => format!("{}{MASK}{}", &url[..start + colon + 1], &url[at..]),
        None => url.to_string(),
    }
}

/// The adapter as every response shows it (CONTRACT §4), masked at every depth. A secret
/// key's non-string value is masked whole; null stays null, as there is nothing to hide.
pub fn mask(settings: &Map<String, Value>) -> Map<String, Value> {
    settings.iter().map(|(key, value)| (key.clone(), mask_value(key, value))).collect()
}

fn mask_value(key: &str, value: &Value) -> Value {
    match value {
        Value::Null => Value::Null,
        _ if crate::db::secrets::is_plain_key(key) => value.clone(),
        Value::String(s) if is_secret_key(key) => Value::String(mask_secret(s)),
        _ if is_secret_key(key) => Value::String(MASK.to_string()),
        Value::String(s) if key.eq_ignore_ascii_case("connection_string") => {
            Value::String(mask_url_password(s))
        }
        Value::Object(map) => Value::Object(mask(map)),
        Value::Array(items) => Value::Array(items.iter().map(|item| mask_value(key, item)).collect()),
        other => other.clone(),
    }
}

/// Puts stored secrets back where a client returned them masked, so that a GET, an edit of
/// one field and a PATCH of the whole adapter does not overwrite secrets with their masks.
fn keep_masked_secrets(new: &mut Map<String, Value>, stored: &Map<String, Value>) {
    for (key, value) in new.iter_mut() {
        let Some(old) = stored.get(key).filter(|_| !crate::db::secrets::is_plain_key(key)) else { continue };
        match value {
            Value::Object(inner) => {
                if let Value::Object(old_inner) = old {
                    keep_masked_secrets(inner, old_inner);
                }
            }
            _ if *value == mask_value(key, old) && value.as_str().is_some_and(|s| s.contains(MASK)) => {
                *value = old.clone();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn problems(owner: Owner, platform: &str, adapter: Value) -> Vec<(String, String)> {
        let mut fields = Fields::new(Map::new());
        validate(&mut fields, owner, platform, &object(adapter));
        match fields.finish() {
            Ok(()) => vec![],
            Err(crate::fields::Invalid(d)) => d.into_iter().collect(),
        }
    }

    #[test]
    fn platform_tokens_are_snake_case() {
        for good in ["bigcommerce", "sftp", "shopify_plus", "a1_b2"] {
            assert!(is_platform_token(good), "{good}");
        }
        for bad in ["", "BigCommerce", "1abc", "_x", "big-commerce", "big commerce", "bigcommerce\n"] {
            assert!(!is_platform_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn known_platforms_name_the_missing_adapter_field() {
        let keys = |p: Vec<(String, String)>| p.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            keys(problems(Owner::Store, "bigcommerce", json!({"access_token": "t"}))),
            ["adapter[store_hash]"]
        );
        assert_eq!(
            keys(problems(
                Owner::Store,
                "bigcommerce",
                json!({"access_token": 5, "store_hash": "h", "client_id": 1})
            )),
            ["adapter[access_token]", "adapter[client_id]"]
        );
        assert_eq!(
            keys(problems(Owner::Store, "sellbrite", json!({}))),
            ["adapter[auth_token]", "adapter[secret_key]"]
        );
        assert_eq!(keys(problems(Owner::Warehouse, "sftp", json!({}))), ["adapter[connection_string]"]);
        assert!(problems(Owner::Store, "etsy", json!({"anything": [1]})).is_empty());
        assert_eq!(
            keys(problems(
                Owner::Store,
                "amazon",
                json!({"region": "na", "marketplace_ids": ["ATVPDKIKX0DER"]})
            )),
            ["adapter[client_id]", "adapter[client_secret]", "adapter[refresh_token]", "adapter[seller_id]"]
        );
        assert_eq!(keys(problems(Owner::Store, "shopify", json!({"access_token": "t"}))), ["adapter[shop]"]);
        // The platform names of the other resource kind are not checked.
        assert!(problems(Owner::Warehouse, "bigcommerce", json!({})).is_empty());
        assert!(problems(Owner::Store, "sftp", json!({})).is_empty());
    }

    #[test]
    fn the_hosted_service_names_are_validated_like_their_platforms() {
        let keys = |p: Vec<(String, String)>| p.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            keys(problems(Owner::Store, "big_commerce", json!({"store_hash": "h"}))),
            ["adapter[access_token]"]
        );
        assert_eq!(
            keys(problems(
                Owner::Store,
                "sellbrite",
                json!({"auth_token": "a", "secret_key": "s", "warehouse_uuid": 1})
            )),
            ["adapter[warehouse_uuid]"]
        );
        let url = |u: &str| json!({"connection_string": u});
        assert!(
            problems(Owner::Warehouse, "dropstream", url("sftp://wh1:secret@ftp.example.com")).is_empty()
        );
        assert_eq!(
            keys(problems(Owner::Warehouse, "dropstream", url("ftp://u:p@h/x"))),
            ["adapter[connection_string]"]
        );
        assert!(problems(Owner::Warehouse, "folder", url("file:///srv/wh")).is_empty());
        assert_eq!(keys(problems(Owner::Warehouse, "folder", url("srv/wh"))), ["adapter[connection_string]"]);
    }

    #[test]
    fn secrets_are_masked_to_their_last_four_characters() {
        assert_eq!(mask_secret("abcdefghijkl"), "********ijkl");
        assert_eq!(mask_secret("abcdefgh"), "********");
        assert_eq!(mask_secret("abcdefghi"), "********fghi");
        assert_eq!(mask_secret(""), "********");
        assert_eq!(mask_secret("ééééééééçàèù"), "********çàèù");
    }

    #[test]
    fn masking_covers_secret_keys_urls_and_nested_objects() {
        let masked = mask(&object(json!({
            "access_token": "tok-1234567890",
            "Client_Secret": "short",
            "API_KEY": 12345,
            "store_hash": "abc123",
            "password": null,
            "connection_string": "sftp://bob:hunter2@files.example.com:22/in",
            "nested": {"refresh_token": "refresh-abcdefgh", "list": [{"secret": "s3cr3t-value"}], "n": 1},
        })));
        assert_eq!(
            Value::Object(masked),
            json!({
                "access_token": "********7890",
                "Client_Secret": "********",
                "API_KEY": "********",
                "store_hash": "abc123",
                "password": null,
                "connection_string": "sftp://bob:********@files.example.com:22/in",
                "nested": {"refresh_token": "********efgh", "list": [{"secret": "********alue"}], "n": 1},
            })
        );
    }

    #[test]
    fn url_masking_leaves_urls_without_a_password_alone() {
        assert_eq!(mask_url_password("ftp://bob@host/x"), "ftp://bob@host/x");
        assert_eq!(mask_url_password("not a url"), "not a url");
        assert_eq!(mask_url_password("ftp://u:p@ss@host/x"), "ftp://u:********@host/x");
        assert_eq!(mask_url_password("ftp://host/a@b:c"), "ftp://host/a@b:c");
    }

    #[test]
    fn a_patch_sending_masked_secrets_back_keeps_the_stored_ones() {
        let stored = Adapter {
            platform: "bigcommerce".into(),
            settings: object(json!({"access_token": "tok-1234567890", "store_hash": "old"})),
        };
        let patch = AdapterPatch {
            platform: None,
            settings: Some(object(json!({"access_token": "********7890", "store_hash": "new"}))),
        };
        let resolved = patch.resolve(Owner::Store, stored).unwrap();
        assert_eq!(
            Value::Object(resolved.settings),
            json!({"access_token": "tok-1234567890", "store_hash": "new"})
        );
    }

    #[test]
    fn a_platform_change_is_validated_against_the_stored_adapter() {
        let stored = Adapter { platform: "custom".into(), settings: object(json!({"x": 1})) };
        let patch = AdapterPatch { platform: Some("sellbrite".into()), settings: None };
        let Err(ApiError::Validation(d)) = patch.resolve(Owner::Store, stored) else { panic!() };
        assert!(d.contains_key("adapter[auth_token]"));
    }
}
