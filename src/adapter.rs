//! A store's or warehouse's `platform` and `adapter` (CONTRACT §4, §6, §8): the platform
//! token, the adapter shapes of the platforms we know, masking of secrets in every response,
//! and the live credential check behind the ping routes. Shared by `stores` and `warehouses`.

use serde_json::{Map, Value};

use crate::api::{ApiResult, NoContent};
use crate::body::{Fields, Patch};
use crate::config::{Config, PingMode};
use crate::error::ApiError;
use crate::ping::{self, PingError, PingSettings};

/// Which resource an adapter belongs to: the same platform name may mean different things.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Store,
    Warehouse,
}

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

    /// Asks the platform whether these credentials authenticate (CONTRACT §8). Offline mode
    /// stops after validation, which the caller has already done.
    pub async fn ping(&self, config: &Config, owner: Owner) -> ApiResult<NoContent> {
        if config.ping_mode == PingMode::Offline {
            return Ok(NoContent);
        }
        let settings = PingSettings {
            timeout: std::time::Duration::from_secs(config.ping_timeout_secs),
            bigcommerce_api_base: config.bigcommerce_api_base.clone(),
            sellbrite_api_base: config.sellbrite_api_base.clone(),
        };
        let outcome = match owner {
            Owner::Store => ping::check_store(&settings, &self.platform, &self.settings).await,
            Owner::Warehouse => ping::check_warehouse(&settings, &self.platform, &self.settings).await,
        };
        outcome.map(|()| NoContent).map_err(|e| match e {
            PingError::AuthenticationFailed(reason) => ApiError::AdapterAuthenticationFailed(reason),
            PingError::Unreachable(reason) => ApiError::AdapterUnreachable(reason),
            PingError::UnsupportedPlatform => ApiError::UnsupportedPlatform(format!(
                "No live credential check exists for platform '{}'; set ping_mode = \"offline\" to validate only.",
                self.platform
            )),
        })
    }
}

/// Reads a stored adapter (JSON text written by this service) at column `index`.
pub fn settings_from_column(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Map<String, Value>> {
    let text: String = row.get(index)?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            "a stored adapter is not a JSON object".into(),
        )),
        Err(e) => {
            Err(rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e)))
        }
    }
}

/// A PATCH of `platform` and/or `adapter`.
#[derive(Debug, Default)]
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

/// Checks the adapter shape of the platforms we know; problems are named `adapter[field]`
/// under `fields`. Other platforms accept any object.
pub fn validate(fields: &mut Fields, owner: Owner, platform: &str, settings: &Map<String, Value>) {
    let mut adapter = fields.child("adapter", settings.clone());
    match (owner, platform) {
        // `big_commerce` is the hosted service's own token; `bigcommerce` is kept as sent.
        (Owner::Store, "big_commerce" | "bigcommerce") => {
            adapter.required("access_token", Fields::text);
            adapter.required("store_hash", Fields::text);
            adapter.text("client_id");
        }
        (Owner::Store, "sellbrite") => {
            adapter.required("auth_token", Fields::text);
            adapter.required("secret_key", Fields::text);
            adapter.text("warehouse_uuid");
        }
        // `dropstream` is the hosted service's own SFTP file drop.
        (Owner::Warehouse, platform @ ("sftp" | "ftp" | "dropstream")) => {
            let scheme = if platform == "ftp" { "ftp" } else { "sftp" };
            if let Some(url) = adapter.required("connection_string", Fields::text)
                && let Err(problem) = FileTransferUrl::parse(&url, scheme)
            {
                adapter.error("connection_string", problem);
            }
            file_folders(&mut adapter);
        }
        // Whether the folder lies inside `folder_warehouse_root` is checked by
        // `check_folder`, which knows the configuration.
        (Owner::Warehouse, "folder") => {
            if let Some(url) = adapter.required("connection_string", Fields::text)
                && let Err(problem) = crate::platforms::files::Location::parse("folder", &url)
            {
                adapter.error("connection_string", problem);
            }
            file_folders(&mut adapter);
        }
        _ => {}
    }
    fields.absorb(adapter);
}

/// The optional folders of a file warehouse (CONTRACT §11): relative paths.
fn file_folders(adapter: &mut Fields) {
    for key in ["orders_dir", "shipments_dir", "inventory_dir"] {
        if let Patch::Value(dir) = adapter.text(key)
            && (dir.starts_with('/') || dir.split('/').any(|part| part == ".."))
        {
            adapter.error(key, "must be a folder relative to the warehouse's root, without '..'");
        }
    }
}

/// A `folder` warehouse may be created or changed by admins only, and its folder must lie
/// inside `root` (`folder_warehouse_root`): it gives orderbridge's own disk to whoever sets it.
pub fn check_folder(adapter: &Adapter, root: &std::path::Path, is_admin: bool) -> ApiResult<()> {
    if adapter.platform != "folder" {
        return Ok(());
    }
    if !is_admin {
        return Err(ApiError::Forbidden("Only admins may create or change a folder warehouse.".to_string()));
    }
    let url = adapter.settings.get("connection_string").and_then(Value::as_str).unwrap_or_default();
    let inside = match crate::platforms::files::Location::parse("folder", url) {
        Ok(crate::platforms::files::Location::Folder(path)) => {
            let normal = |p: &std::path::Path| {
                p.components().fold(std::path::PathBuf::new(), |mut out, c| {
                    match c {
                        std::path::Component::ParentDir => {
                            out.pop();
                        }
                        std::path::Component::CurDir => {}
                        other => out.push(other),
                    }
                    out
                })
            };
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| normal(root));
            let path = std::fs::canonicalize(&path).unwrap_or_else(|_| normal(&path));
            path.starts_with(&root)
        }
        _ => false,
    };
    if inside {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "adapter[connection_string]",
            format!("must be a folder inside {} (folder_warehouse_root)", root.display()),
        ))
    }
}

/// The parts of an `sftp://user:password@host[:port]/path` (or `ftp://`) URL.
#[derive(Debug, PartialEq, Eq)]
pub struct FileTransferUrl<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub host: &'a str,
    pub port: Option<u16>,
    pub path: &'a str,
}

impl<'a> FileTransferUrl<'a> {
    pub fn parse(url: &'a str, scheme: &str) -> Result<FileTransferUrl<'a>, String> {
        let shape = format!("{scheme}://user:password@host[:port][/path]");
        let rest = url
            .strip_prefix(scheme)
            .and_then(|r| r.strip_prefix("://"))
            .ok_or_else(|| format!("must be a URL of the form {shape}"))?;
        if rest.chars().any(char::is_whitespace) {
            return Err(format!("must not contain spaces; expected {shape}"));
        }
        // No path means the login directory.
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        // The password may hold an unescaped '@'; the host never does.
        let (userinfo, host_port) = authority
            .rsplit_once('@')
            .ok_or_else(|| format!("needs a user and password; expected {shape}"))?;
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        if user.is_empty() {
            return Err(format!("needs a user name; expected {shape}"));
        }
        if password.is_empty() {
            return Err(format!("needs a password; expected {shape}"));
        }
        let (host, port) = split_port(host_port).map_err(|p| format!("{p}; expected {shape}"))?;
        Ok(FileTransferUrl { user, password, host, port, path })
    }
}

fn split_port(host_port: &str) -> Result<(&str, Option<u16>), &'static str> {
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        // A bracketed IPv6 literal: [::1] or [::1]:22.
        let close = inner.find(']').ok_or("has an unclosed '[' in the host")?;
        let host = &host_port[..close + 2];
        let after = &inner[close + 1..];
        let ip = &inner[..close];
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err("has an invalid IPv6 host");
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or("has text after the host")?)),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Err("needs a host");
    }
    if !host.starts_with('[') && !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
        return Err("has an invalid host name");
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok().filter(|p| *p >= 1).ok_or("has a port outside 1..65535")?)
        }
        Some(_) => return Err("has a port that is not a number"),
    };
    Ok((host, port))
}

/// Whether an adapter key names a secret: it contains token, secret, password or key.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["token", "secret", "password", "key"].iter().any(|word| key.contains(word))
}

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
        let Some(old) = stored.get(key) else { continue };
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
            Err(ApiError::Validation(d)) => d.into_iter().collect(),
            Err(e) => panic!("{e:?}"),
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
        assert!(problems(Owner::Store, "shopify", json!({"anything": [1]})).is_empty());
        // The platform names of the other resource kind are not checked.
        assert!(problems(Owner::Warehouse, "bigcommerce", json!({})).is_empty());
        assert!(problems(Owner::Store, "sftp", json!({})).is_empty());
    }

    #[test]
    fn file_transfer_urls_are_checked_part_by_part() {
        assert_eq!(
            FileTransferUrl::parse("sftp://bob:p@ss@files.example.com:2222/in/orders", "sftp"),
            Ok(FileTransferUrl {
                user: "bob",
                password: "p@ss",
                host: "files.example.com",
                port: Some(2222),
                path: "/in/orders"
            })
        );
        assert!(FileTransferUrl::parse("ftp://u:p@10.0.0.1/", "ftp").is_ok());
        assert!(FileTransferUrl::parse("sftp://u:p@[::1]:22/x", "sftp").is_ok());
        // No path: the login directory.
        assert_eq!(FileTransferUrl::parse("sftp://u:p@host", "sftp").map(|u| u.path), Ok(""));
        for bad in [
            "ftp://u:p@host/x",
            "sftp:/u:p@host/x",
            "sftp://host/x",
            "sftp://u@host/x",
            "sftp://:p@host/x",
            "sftp://u:@host/x",
            "sftp://u:p@/x",
            "sftp://u:p@host:abc/x",
            "sftp://u:p@host:70000/x",
            "sftp://u:p@host:/x",
            "sftp://u:p@ho st/x",
            "sftp://u:p@ho_st!/x",
        ] {
            assert!(FileTransferUrl::parse(bad, "sftp").is_err(), "{bad}");
        }
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
