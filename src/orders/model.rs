//! An order as an import record carries it: validation of every field (without the
//! database; references are checked by the writer) and rendering of the stored document.

use serde_json::{Map, Value};

use super::fields::{self, EXTERNAL_ID, ITEM_FIELDS, Kind, ORDER_FIELDS, Scalar};
use crate::fields::Details;
use crate::fields::{Fields, Patch, element_fields};
use crate::jsondoc::{self, Obj};

/// The most items one order may carry.
pub const MAX_ITEMS: usize = 10_000;

/// The fields of an address, in its columns' order.
pub const ADDRESS_FIELDS: [&str; 9] = [
    "first_name",
    "last_name",
    "street1",
    "street2",
    "city",
    "region",
    "postal_code",
    "country",
    "telephone",
];

/// A validated order, ready to write.
#[derive(Debug, Clone)]
pub struct NewOrder {
    pub store_id: i64,
    /// Aligned with `ORDER_FIELDS`.
    pub values: Vec<Scalar>,
    /// Normalized JSON of the address objects; `None` is null.
    pub shipping_address: Option<String>,
    pub billing_address: Option<String>,
    /// Normalized JSON of the `custom` map.
    pub custom: String,
    pub items: Vec<NewItem>,
}

#[derive(Debug, Clone)]
pub struct NewItem {
    /// Aligned with `ITEM_FIELDS`.
    pub values: Vec<Scalar>,
    /// Normalized JSON: an array of objects, each with `gift_message`.
    pub options: String,
    /// Normalized JSON: an object with `gift_message`.
    pub custom: String,
}

impl NewOrder {
    pub fn external_id(&self) -> &str {
        self.values[EXTERNAL_ID].as_text().unwrap_or_default()
    }

    /// Validates an import record; the problems map field names to what is wrong.
    pub fn from_record(record: Map<String, Value>) -> Result<NewOrder, Details> {
        let mut f = Fields::new(record);
        let store_id = f.required("store_id", Fields::id);
        let mut values = Vec::with_capacity(ORDER_FIELDS.len());
        for (i, (key, kind)) in ORDER_FIELDS.iter().enumerate() {
            if i == EXTERNAL_ID {
                let id = f.required(key, Fields::text);
                values.push(id.map_or(Scalar::Null, Scalar::Text));
            } else {
                values.push(fields::read(&mut f, key, *kind));
            }
        }
        let shipping_address = read_address(&mut f, "shipping_address");
        let billing_address = read_address(&mut f, "billing_address");
        let custom = read_string_map(&mut f, "custom", None).unwrap_or_else(|| "{}".to_string());
        let items = read_items(&mut f);
        finish(f)?;
        Ok(NewOrder {
            store_id: store_id.unwrap_or_default(),
            values,
            shipping_address,
            billing_address,
            custom,
            items,
        })
    }

    /// The stored document: the Order object as the API returns it.
    pub fn render(&self, id: i64, created_at: i64, item_keys: &[(i64, i64)]) -> String {
        let mut out = String::with_capacity(2048 + 800 * self.items.len());
        let mut o = Obj::new(&mut out);
        o.int("id", Some(id));
        o.int("store_id", Some(self.store_id));
        for ((key, kind), value) in ORDER_FIELDS.iter().zip(&self.values) {
            fields::render(&mut o, key, *kind, value);
        }
        o.timestamp("created_at", Some(created_at));
        o.raw("custom", &self.custom);
        o.raw("shipping_address", self.shipping_address.as_deref().unwrap_or("null"));
        o.raw("billing_address", self.billing_address.as_deref().unwrap_or("null"));
        let items = o.value("order_items");
        items.push('[');
        for (i, (item, (item_id, item_created))) in self.items.iter().zip(item_keys).enumerate() {
            if i > 0 {
                items.push(',');
            }
            item.render_into(items, *item_id, *item_created);
        }
        items.push(']');
        o.end();
        out
    }
}

impl NewItem {
    fn render_into(&self, out: &mut String, id: i64, created_at: i64) {
        let mut o = Obj::new(out);
        o.int("id", Some(id));
        for ((key, kind), value) in ITEM_FIELDS.iter().zip(&self.values) {
            fields::render(&mut o, key, *kind, value);
        }
        o.timestamp("created_at", Some(created_at));
        o.raw("options", &self.options);
        o.raw("custom", &self.custom);
        o.end();
    }

    pub fn external_id(&self) -> Option<&str> {
        self.values[fields::EXTERNAL_ORDER_ITEM_ID].as_text()
    }
}

pub use crate::fields::finish;

fn read_address(f: &mut Fields, key: &str) -> Option<String> {
    let map = f.object(key).value()?;
    let mut child = f.child(key, map);
    let mut values: Vec<Option<String>> = Vec::with_capacity(ADDRESS_FIELDS.len());
    for field in ADDRESS_FIELDS {
        let kind = if field == "country" { Kind::Country } else { Kind::Text };
        values.push(match fields::read(&mut child, field, kind) {
            Scalar::Text(s) => Some(s),
            _ => None,
        });
    }
    f.absorb(child);
    let mut out = String::with_capacity(256);
    jsondoc::write_string_map(
        &mut out,
        ADDRESS_FIELDS.iter().copied().zip(values.iter().map(|v| v.as_deref())),
    );
    Some(out)
}

/// An object of string keys to string (or null) values, normalized; `required_key` is added
/// with null when missing. `None` when absent, null or invalid.
fn read_string_map(f: &mut Fields, key: &str, required_key: Option<&str>) -> Option<String> {
    let map = match f.object(key) {
        Patch::Value(map) => map,
        _ => return None,
    };
    let mut entries: Vec<(String, Option<String>)> = Vec::with_capacity(map.len() + 1);
    let mut bad = false;
    for (k, v) in map {
        match v {
            Value::String(s) => entries.push((k, Some(s))),
            Value::Null => entries.push((k, None)),
            _ => {
                f.error(&format!("{key}[{k}]"), "must be a string");
                bad = true;
            }
        }
    }
    if bad {
        return None;
    }
    if let Some(required) = required_key
        && !entries.iter().any(|(k, _)| k == required)
    {
        entries.insert(0, (required.to_string(), None));
    }
    let mut out = String::with_capacity(64);
    jsondoc::write_string_map(&mut out, entries.iter().map(|(k, v)| (k.as_str(), v.as_deref())));
    Some(out)
}

fn read_items(f: &mut Fields) -> Vec<NewItem> {
    let list = match f.array("order_items") {
        Patch::Value(list) => list,
        _ => return Vec::new(),
    };
    if list.len() > MAX_ITEMS {
        f.error("order_items", format!("must have at most {MAX_ITEMS} items"));
        return Vec::new();
    }
    let mut items = Vec::with_capacity(list.len());
    for (i, element) in list.into_iter().enumerate() {
        let mut child = match element_fields(f, "order_items", i, element) {
            Ok(child) => child,
            Err(problem) => {
                f.error(&format!("order_items[{i}]"), problem);
                continue;
            }
        };
        let values = ITEM_FIELDS.iter().map(|(key, kind)| fields::read(&mut child, key, *kind)).collect();
        let options = read_options(&mut child);
        let custom = read_string_map(&mut child, "custom", Some("gift_message"))
            .unwrap_or_else(|| r#"{"gift_message":null}"#.to_string());
        f.absorb(child);
        items.push(NewItem { values, options, custom });
    }
    items
}

fn read_options(f: &mut Fields) -> String {
    let list = match f.array("options") {
        Patch::Value(list) => list,
        _ => return "[]".to_string(),
    };
    let mut out = String::from("[");
    for (i, element) in list.into_iter().enumerate() {
        let key = format!("options[{i}]");
        let Value::Object(map) = element else {
            f.error(&key, "must be an object");
            continue;
        };
        let mut holder = Fields::new(Map::from_iter([(key.clone(), Value::Object(map))]));
        if let Some(option) = read_string_map(&mut holder, &key, Some("gift_message")) {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&option);
        }
        if let Err(details) = finish(holder) {
            for (k, problem) in details {
                f.error(&k, problem);
            }
        }
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_full_record_renders_every_documented_field() {
        let order = NewOrder::from_record(record(json!({
            "store_id": 3, "external_id": "E1", "shipping_amount": "12.5", "signature_required": true,
            "ordered_at": "2024-03-05T14:07:09Z", "country_of_origin": "us", "custom": {"a": "b"},
            "shipping_address": {"first_name": "Ann", "country": "DE"},
            "order_items": [{"sku": "S1", "unit_price": 3, "weight": "1234567.5", "quantity": 2,
                              "options": [{"gift_message": "hi"}], "custom": {}}]
        })))
        .unwrap();
        let doc = order.render(7, 1_709_647_629_120, &[(11, 1_709_647_629_120)]);
        assert!(doc.contains(r#""shipping_amount":12.50"#), "{doc}");
        assert!(doc.contains(r#""unit_price":3.00"#), "{doc}");
        let v: Value = serde_json::from_str(&doc).unwrap();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), 2 + ORDER_FIELDS.len() + 5, "{doc}");
        assert_eq!(v["id"], 7);
        assert_eq!(v["country_of_origin"], "US");
        assert_eq!(v["billing_address"], Value::Null);
        assert_eq!(v["shipping_address"]["country"], "DE");
        assert_eq!(v["shipping_address"]["telephone"], Value::Null);
        assert_eq!(v["order_items"][0]["id"], 11);
        assert_eq!(v["order_items"][0]["quantity"], 2);
        assert_eq!(v["order_items"][0]["custom"], json!({"gift_message": null}));
        assert_eq!(v["order_items"][0]["options"], json!([{"gift_message": "hi"}]));
        assert_eq!(v["order_items"][0].as_object().unwrap().len(), ITEM_FIELDS.len() + 4);
    }

    #[test]
    fn problems_are_named_by_field_path() {
        let problems = NewOrder::from_record(record(json!({
            "external_id": "", "tax_amount": 1.234, "custom": {"x": 1},
            "shipping_address": {"country": "USA"}, "order_items": [{"weight": "x"}, 5]
        })))
        .unwrap_err();
        for key in [
            "store_id",
            "external_id",
            "tax_amount",
            "custom[x]",
            "shipping_address[country]",
            "order_items[0][weight]",
            "order_items[1]",
        ] {
            assert!(problems.contains_key(key), "{key} in {problems:?}");
        }
    }
}
