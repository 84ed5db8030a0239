//! An order as an import record carries it: validation of every field (without the
//! database; references are checked by the writer) and rendering of the stored document.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::fields::{self, EXTERNAL_ID, ITEM_FIELDS, Kind, ORDER_FIELDS, Scalar};
use crate::fields::Details;
use crate::fields::{Fields, Patch, Schema, Slots};
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

/// An order record's keys, in the order `from_record` reads them, for reading import lines
/// straight into them (`fields::slots`); `order_items` holds items read the same way.
pub static ORDER_SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut keys = vec!["store_id"];
    keys.extend(ORDER_FIELDS.iter().map(|(k, _)| *k));
    keys.extend(["shipping_address", "billing_address", "custom", "order_items"]);
    Schema::new(keys, &[("order_items", &ITEM_SCHEMA)])
});

static ITEM_SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut keys: Vec<&'static str> = ITEM_FIELDS.iter().map(|(k, _)| *k).collect();
    keys.extend(["options", "custom"]);
    Schema::new(keys, &[])
});

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
        Self::read(Fields::new(record))
    }

    /// `from_record` of a record read into `ORDER_SCHEMA`'s slots: the same order, or the
    /// same problems.
    pub fn from_slots(record: Slots) -> Result<NewOrder, Details> {
        Self::read(Fields::from_slots(record))
    }

    fn read(mut f: Fields) -> Result<NewOrder, Details> {
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
        let written = Written { id, created_at, item_keys };
        self.render_with(&mut out, &mut |out, hole| written.write(out, hole));
        out
    }

    /// The stored document less what only writing it decides (the ids and times of
    /// writing), for the import's parsing thread to render while the writer writes.
    pub fn template(&self) -> Template {
        let mut text = String::with_capacity(2048 + 800 * self.items.len());
        let mut holes = Vec::with_capacity(2 + 2 * self.items.len());
        self.render_with(&mut text, &mut |out, hole| holes.push((out.len(), hole)));
        Template { text, holes }
    }

    /// Renders the document; `hole` writes each value only writing decides.
    fn render_with(&self, out: &mut String, hole: &mut impl FnMut(&mut String, Hole)) {
        let mut o = Obj::new(out);
        hole(o.value("id"), Hole::Id);
        o.int("store_id", Some(self.store_id));
        for ((key, kind), value) in ORDER_FIELDS.iter().zip(&self.values) {
            fields::render(&mut o, key, *kind, value);
        }
        hole(o.value("created_at"), Hole::CreatedAt);
        o.raw("custom", &self.custom);
        o.raw("shipping_address", self.shipping_address.as_deref().unwrap_or("null"));
        o.raw("billing_address", self.billing_address.as_deref().unwrap_or("null"));
        let items = o.value("order_items");
        items.push('[');
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                items.push(',');
            }
            item.render_into(items, i, hole);
        }
        items.push(']');
        o.end();
    }
}

/// A value of an order's document that only writing it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    Id,
    CreatedAt,
    ItemId(usize),
    ItemCreatedAt(usize),
}

/// What writing an order decided: its id and time, and its items' (id, created_at).
struct Written<'a> {
    id: i64,
    created_at: i64,
    item_keys: &'a [(i64, i64)],
}

impl Written<'_> {
    fn write(&self, out: &mut String, hole: Hole) {
        let value = |i: usize, pick: fn(&(i64, i64)) -> i64| self.item_keys.get(i).map(pick);
        match hole {
            Hole::Id => jsondoc::write_int(out, Some(self.id)),
            Hole::CreatedAt => jsondoc::write_timestamp(out, Some(self.created_at)),
            Hole::ItemId(i) => jsondoc::write_int(out, value(i, |k| k.0)),
            Hole::ItemCreatedAt(i) => jsondoc::write_timestamp(out, value(i, |k| k.1)),
        }
    }
}

/// An order's document rendered but for its ids and times of writing (`NewOrder::template`).
#[derive(Debug, Clone)]
pub struct Template {
    text: String,
    /// Where each value goes in `text`, in order.
    holes: Vec<(usize, Hole)>,
}

impl Template {
    /// The document `NewOrder::render` renders for the same values, byte for byte.
    pub fn fill(&self, id: i64, created_at: i64, item_keys: &[(i64, i64)]) -> String {
        let written = Written { id, created_at, item_keys };
        let mut out = String::with_capacity(self.text.len() + 40 * self.holes.len());
        let mut at = 0;
        for (offset, hole) in &self.holes {
            out.push_str(&self.text[at..*offset]);
            written.write(&mut out, *hole);
            at = *offset;
        }
        out.push_str(&self.text[at..]);
        out
    }
}

impl NewItem {
    fn render_into(&self, out: &mut String, index: usize, hole: &mut impl FnMut(&mut String, Hole)) {
        let mut o = Obj::new(out);
        hole(o.value("id"), Hole::ItemId(index));
        for ((key, kind), value) in ITEM_FIELDS.iter().zip(&self.values) {
            fields::render(&mut o, key, *kind, value);
        }
        hole(o.value("created_at"), Hole::ItemCreatedAt(index));
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
    let list = match f.objects("order_items") {
        Patch::Value(list) => list,
        _ => return Vec::new(),
    };
    if list.len() > MAX_ITEMS {
        f.error("order_items", format!("must have at most {MAX_ITEMS} items"));
        return Vec::new();
    }
    let mut items = Vec::with_capacity(list.len());
    for (i, element) in list.into_iter().enumerate() {
        let mut child = match element {
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
