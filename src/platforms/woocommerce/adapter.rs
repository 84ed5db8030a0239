//! A WooCommerce store's adapter (annex §1.1): the rules checked at create, update and ping,
//! and the typed form the client reads. The store's own `url` is the API's address, so its
//! rules (https, or http on loopback only) are what keeps a consumer secret off the wire.

use std::net::IpAddr;

use serde_json::{Map, Value};

use crate::fields::{Fields, Patch};
use crate::platforms::PlatformError;

/// Statuses that end an order at the store: a known order in one of them is canceled here
/// (annex, decisions). `trash` is an order the merchant deleted.
pub const CANCELLING: [&str; 4] = ["cancelled", "refunded", "failed", "trash"];

/// Statuses imported when the adapter names none.
const DEFAULT_IMPORT: &str = "processing";

/// How requests prove who sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Basic`, which WooCommerce reads only over https.
    Basic,
    /// `consumer_key` and `consumer_secret` in the query, for servers that drop the header.
    QueryString,
    /// OAuth 1.0a one-legged signatures in the query: what WooCommerce asks over plain http.
    OAuth1,
}

/// Whether shipments are reported through the Shipment Tracking extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracking {
    /// When the store has it, else order notes.
    Auto,
    /// Always: a store without it cannot be told.
    Required,
    /// Never: order notes.
    Off,
}

/// A validated adapter, typed.
#[derive(Debug, Clone)]
pub struct Shop {
    /// `url` without a trailing `/`: `https://shop.example.com` or `https://example.com/wp`.
    pub base: String,
    pub key: String,
    pub secret: String,
    pub auth: Auth,
    pub import_statuses: Vec<String>,
    pub tracking: Tracking,
    pub notify_customer: bool,
    pub complete_orders: bool,
}

/// The adapter's rules; problems are named `adapter[key]`.
pub fn validate(adapter: &mut Fields) {
    let http = match adapter.required("url", Fields::text) {
        Some(text) => match store_url(&text) {
            Ok(url) => Some(url.scheme() == "http"),
            Err(problem) => {
                adapter.error("url", problem);
                None
            }
        },
        None => None,
    };
    adapter.required("consumer_key", Fields::text);
    adapter.required("consumer_secret", Fields::text);
    if let Patch::Value(text) = adapter.text("auth") {
        match auth(&text) {
            None => adapter.error("auth", "must be basic, query_string or oauth1"),
            Some(a) if http == Some(true) && a != Auth::OAuth1 => adapter.error(
                "auth",
                "must be oauth1 with an http:// url: WooCommerce reads keys over http only when signed",
            ),
            Some(_) => {}
        }
    }
    if let Patch::Value(items) = adapter.array("import_statuses")
        && let Err(problem) = statuses(&items)
    {
        adapter.error("import_statuses", problem);
    }
    adapter.read("shipment_tracking", tracking);
    adapter.boolean("notify_customer");
    adapter.boolean("complete_orders");
}

impl Shop {
    /// The typed form of an adapter the caller validated; anything unreadable (a bug of the
    /// caller) is a refusal naming the key, never a panic.
    pub fn from_adapter(adapter: &Map<String, Value>) -> Result<Shop, PlatformError> {
        let bad =
            |key: &str| PlatformError::Refused(format!("The WooCommerce adapter's {key} cannot be used."));
        let text = |key: &str| adapter.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
        let url = text("url").ok_or_else(|| bad("url"))?;
        let url = store_url(url).map_err(|_| bad("url"))?;
        let base = url.as_str().trim_end_matches('/').to_string();
        let auth = match adapter.get("auth") {
            None | Some(Value::Null) if url.scheme() == "http" => Auth::OAuth1,
            None | Some(Value::Null) => Auth::Basic,
            Some(value) => value.as_str().and_then(auth).ok_or_else(|| bad("auth"))?,
        };
        if url.scheme() == "http" && auth != Auth::OAuth1 {
            return Err(bad("auth"));
        }
        // Read as validation read it: a form's indexed object counts as an array.
        let import_statuses = match Fields::new(adapter.clone()).array("import_statuses") {
            Patch::Absent | Patch::Null => vec![DEFAULT_IMPORT.to_string()],
            Patch::Value(items) => statuses(&items).map_err(|_| bad("import_statuses"))?,
        };
        let tracking = match adapter.get("shipment_tracking") {
            None | Some(Value::Null) => Tracking::Auto,
            Some(value) => self::tracking(value.clone()).map_err(|_| bad("shipment_tracking"))?,
        };
        let flag = |key: &str| match adapter.get(key) {
            None | Some(Value::Null) => Ok(true),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "1" => Ok(true),
            Some(Value::String(s)) if s == "false" || s == "0" => Ok(false),
            Some(Value::Number(n)) if n.as_i64() == Some(1) => Ok(true),
            Some(Value::Number(n)) if n.as_i64() == Some(0) => Ok(false),
            Some(_) => Err(bad(key)),
        };
        Ok(Shop {
            base,
            key: text("consumer_key").ok_or_else(|| bad("consumer_key"))?.to_string(),
            secret: text("consumer_secret").ok_or_else(|| bad("consumer_secret"))?.to_string(),
            auth,
            import_statuses,
            tracking,
            notify_customer: flag("notify_customer")?,
            complete_orders: flag("complete_orders")?,
        })
    }

    /// Whether a status is one the adapter imports.
    pub fn imports(&self, status: &str) -> bool {
        self.import_statuses.iter().any(|s| s == status)
    }
}

/// The store's address: an absolute https URL (a path is allowed, for WordPress in a
/// subfolder), or http on a loopback host; no user, query or fragment.
pub fn store_url(text: &str) -> Result<url::Url, &'static str> {
    let url = url::Url::parse(text.trim()).map_err(|_| "must be an absolute https:// URL")?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => return Err("https is required except on loopback"),
        _ => return Err("must be an absolute https:// URL"),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("must be an absolute https:// URL");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not contain a user name or password");
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must have no query or fragment");
    }
    Ok(url)
}

/// `localhost`, a 127.0.0.0/8 address or `[::1]`.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

fn auth(text: &str) -> Option<Auth> {
    match text {
        "basic" => Some(Auth::Basic),
        "query_string" => Some(Auth::QueryString),
        "oauth1" => Some(Auth::OAuth1),
        _ => None,
    }
}

fn tracking(value: Value) -> Result<Tracking, String> {
    match value {
        Value::Bool(true) => Ok(Tracking::Required),
        Value::Bool(false) => Ok(Tracking::Off),
        Value::String(s) => match s.as_str() {
            "auto" => Ok(Tracking::Auto),
            "true" | "1" => Ok(Tracking::Required),
            "false" | "0" => Ok(Tracking::Off),
            _ => Err("must be \"auto\", true or false".to_string()),
        },
        Value::Number(n) if n.as_i64() == Some(1) => Ok(Tracking::Required),
        Value::Number(n) if n.as_i64() == Some(0) => Ok(Tracking::Off),
        _ => Err("must be \"auto\", true or false".to_string()),
    }
}

/// A non-empty list of WooCommerce status slugs, none of which ends an order.
fn statuses(items: &[Value]) -> Result<Vec<String>, String> {
    if items.is_empty() {
        return Err("must name at least one status".into());
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Some(slug) = item.as_str() else { return Err("must be an array of status slugs".into()) };
        let well_formed = !slug.is_empty()
            && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !well_formed {
            return Err(format!("{slug:?} is not a status slug (a-z, 0-9, _ and -)"));
        }
        if slug.starts_with("wc-") {
            return Err(format!("{slug:?}: write the status without its wc- prefix"));
        }
        if CANCELLING.contains(&slug) {
            return Err(format!("must not contain {slug}: an order in it is canceled, never imported"));
        }
        out.push(slug.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(adapter: Value) -> Vec<(String, String)> {
        crate::fields::adapter_problems(validate, adapter)
    }

    fn good() -> Value {
        json!({"url": "https://shop.example.com/", "consumer_key": "ck_1", "consumer_secret": "cs_1"})
    }

    #[test]
    fn bad_adapters_name_their_key() {
        let with = |key: &str, value: Value| {
            let mut adapter = good();
            adapter[key] = value;
            adapter
        };
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                with("url", json!("http://shop.example.com")),
                "adapter[url]",
                "https is required except on loopback",
            ),
            (with("url", json!("ftp://shop.example.com")), "adapter[url]", "https://"),
            (with("url", json!("shop.example.com")), "adapter[url]", "https://"),
            (with("url", json!("https://u:p@shop.example.com")), "adapter[url]", "user name"),
            (with("url", json!("https://shop.example.com/?x=1")), "adapter[url]", "no query"),
            (with("url", json!("https://shop.example.com/#x")), "adapter[url]", "no query"),
            (with("url", json!(7)), "adapter[url]", "string"),
            (with("consumer_key", json!(" ")), "adapter[consumer_key]", "empty"),
            (with("consumer_secret", Value::Null), "adapter[consumer_secret]", "required"),
            (with("auth", json!("digest")), "adapter[auth]", "basic, query_string or oauth1"),
            (with("import_statuses", json!([])), "adapter[import_statuses]", "at least one"),
            (with("import_statuses", json!("processing")), "adapter[import_statuses]", "array"),
            (with("import_statuses", json!(["wc-processing"])), "adapter[import_statuses]", "wc- prefix"),
            (with("import_statuses", json!(["Processing"])), "adapter[import_statuses]", "slug"),
            (
                with("import_statuses", json!(["processing", "cancelled"])),
                "adapter[import_statuses]",
                "cancelled",
            ),
            (with("import_statuses", json!(["refunded"])), "adapter[import_statuses]", "refunded"),
            (with("shipment_tracking", json!("maybe")), "adapter[shipment_tracking]", "auto"),
            (with("notify_customer", json!("yes")), "adapter[notify_customer]", "true or false"),
            (with("complete_orders", json!([])), "adapter[complete_orders]", "true or false"),
        ];
        for (adapter, key, fragment) in cases {
            let found = problems(adapter.clone());
            assert_eq!(found.len(), 1, "{adapter}: {found:?}");
            assert_eq!(found[0].0, key, "{adapter}");
            assert!(found[0].1.contains(fragment), "{adapter}: {found:?}");
        }
        let mut http = good();
        http["url"] = json!("http://127.0.0.1:8080");
        http["auth"] = json!("basic");
        assert_eq!(problems(http)[0].0, "adapter[auth]", "over http only signatures");
    }

    #[test]
    fn loopback_http_and_every_documented_form_are_accepted() {
        assert!(problems(good()).is_empty());
        for url in
            ["http://localhost:8080", "http://127.0.0.1:9/shop", "http://[::1]/", "https://example.com/wp/"]
        {
            let mut adapter = good();
            adapter["url"] = json!(url);
            assert!(problems(adapter).is_empty(), "{url}");
        }
        let full = json!({"url": "https://example.com/wp/", "consumer_key": "ck", "consumer_secret": "cs",
                          "auth": "query_string", "import_statuses": ["processing", "on-hold"],
                          "shipment_tracking": "0", "notify_customer": "false", "complete_orders": 1});
        assert!(problems(full.clone()).is_empty());
        let shop = Shop::from_adapter(full.as_object().unwrap()).unwrap();
        assert_eq!(shop.base, "https://example.com/wp");
        assert_eq!(shop.auth, Auth::QueryString);
        assert_eq!(shop.import_statuses, ["processing", "on-hold"]);
        assert_eq!(shop.tracking, Tracking::Off);
        assert!(!shop.notify_customer && shop.complete_orders);
    }

    #[test]
    fn defaults_follow_the_scheme_and_the_annex() {
        let shop = Shop::from_adapter(good().as_object().unwrap()).unwrap();
        assert_eq!((shop.auth, shop.tracking), (Auth::Basic, Tracking::Auto));
        assert_eq!(shop.import_statuses, ["processing"]);
        assert!(shop.notify_customer && shop.complete_orders);
        assert_eq!(shop.base, "https://shop.example.com");
        let local = json!({"url": "http://127.0.0.1:8080/", "consumer_key": "ck", "consumer_secret": "cs"});
        assert_eq!(Shop::from_adapter(local.as_object().unwrap()).unwrap().auth, Auth::OAuth1);
    }
}
