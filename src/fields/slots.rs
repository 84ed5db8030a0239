//! A JSON object read straight into the keys its reader knows, for import records.
//!
//! `serde_json::Map` is a B-tree. Decoding an order of ~90 keys into maps, and `Fields`
//! removing each key again, was about 40% of an import's parsing thread. Here each known key
//! has a slot, found by position, and the values stay `serde_json::Value`s made by
//! `Value`'s own `Deserialize`. So every conversion and message downstream is the one
//! `Fields` gives a decoded map.
//!
//! - Unknown keys are skipped. Readers never look at them.
//! - A repeated key keeps its last value, as `Map` does.
//! - A key the schema marks as nested holds an array whose object elements are read into
//!   slots too. Anything else under that key (an object, a string, null) is kept as its
//!   `Value`, so `Fields` reports it exactly as before.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The keys of one kind of object, and which of them hold arrays of objects of another.
pub struct Schema {
    keys: Vec<&'static str>,
    index: HashMap<&'static str, usize>,
    nested: Vec<Option<&'static Schema>>,
}

impl Schema {
    /// `keys` in the order readers usually meet them (lookups try the next one first);
    /// `nested` names the keys holding arrays of `Schema` objects.
    pub fn new(keys: Vec<&'static str>, nested: &[(&'static str, &'static Schema)]) -> Schema {
        let index = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let nested = keys.iter().map(|k| nested.iter().find(|(n, _)| n == k).map(|(_, s)| *s)).collect();
        Schema { keys, index, nested }
    }

    /// Where `key` lives; `hint` is tried first.
    fn position(&self, key: &str, hint: usize) -> Option<usize> {
        match self.keys.get(hint) {
            Some(k) if *k == key => Some(hint),
            _ => self.index.get(key).copied(),
        }
    }
}

/// What a slot holds: the key's JSON value, or the elements of a nested array, each an
/// object read into slots or, when not an object, its value.
#[derive(Debug)]
pub enum Slot {
    Value(Value),
    Objects(Vec<Result<Slots, Value>>),
}

impl Slot {
    /// The value a decoded map would have held under the key (unknown keys dropped).
    pub fn into_value(self) -> Value {
        match self {
            Slot::Value(v) => v,
            Slot::Objects(list) => Value::Array(
                list.into_iter().map(|e| e.map_or_else(|v| v, |s| Value::Object(s.into_map()))).collect(),
            ),
        }
    }
}

/// An object read into a schema's slots.
pub struct Slots {
    schema: &'static Schema,
    values: Vec<Option<Slot>>,
    /// Where the next `take` looks first: readers take keys in the schema's order.
    next: usize,
}

impl fmt::Debug for Slots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let present =
            self.schema.keys.iter().zip(&self.values).filter_map(|(k, v)| v.as_ref().map(|v| (k, v)));
        f.debug_map().entries(present).finish()
    }
}

impl Slots {
    /// Reads `text`, one JSON value: `Ok(None)` when it is JSON but not an object, `Err`
    /// (serde_json's own message) when it is not JSON, as `serde_json::from_str` would say.
    pub fn parse(text: &str, schema: &'static Schema) -> serde_json::Result<Option<Slots>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let slots = ObjectSeed(schema).deserialize(&mut de)?;
        de.end()?;
        Ok(slots)
    }

    /// Takes the slot of `key`; `None` when the object had no such key (or it is unknown).
    pub fn take(&mut self, key: &str) -> Option<Slot> {
        let at = self.schema.position(key, self.next)?;
        self.next = at + 1;
        self.values[at].take()
    }

    /// The map a plain decode would have made, less unknown keys.
    pub fn into_map(self) -> Map<String, Value> {
        let keys = &self.schema.keys;
        keys.iter().zip(self.values).filter_map(|(k, v)| Some((k.to_string(), v?.into_value()))).collect()
    }
}

/// An object into slots, or `None` (the value consumed) when it is not an object.
struct ObjectSeed(&'static Schema);

impl<'de> DeserializeSeed<'de> for ObjectSeed {
    type Value = Option<Slots>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(ObjectVisitor(self.0))
    }
}

struct ObjectVisitor(&'static Schema);

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Option<Slots>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let schema = self.0;
        let mut values: Vec<Option<Slot>> = std::iter::repeat_with(|| None).take(schema.keys.len()).collect();
        let mut hint = 0;
        while let Some(at) = map.next_key_seed(KeySeed(schema, hint))? {
            let Some(at) = at else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            hint = at + 1;
            values[at] = Some(match schema.nested[at] {
                Some(inner) => map.next_value_seed(NestedSeed(inner))?,
                None => Slot::Value(map.next_value()?),
            });
        }
        Ok(Some(Slots { schema, values, next: 0 }))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A key, as its slot: `Some(None)` for a key the schema does not know.
struct KeySeed(&'static Schema, usize);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.position(key, self.1))
    }
}

/// The value of a nested key: an array's object elements into slots, and anything else as
/// the `Value` serde_json makes of it.
struct NestedSeed(&'static Schema);

impl<'de> DeserializeSeed<'de> for NestedSeed {
    type Value = Slot;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Slot, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NestedSeed {
    type Value = Slot;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Slot, A::Error> {
        let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(element) = seq.next_element_seed(ElementSeed(self.0))? {
            elements.push(element);
        }
        Ok(Slot::Objects(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Slot, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Slot::Value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Slot, E> {
        Ok(Slot::Value(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Slot, E> {
        Ok(Slot::Value(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Slot, E> {
        Ok(Slot::Value(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Slot, E> {
        // As serde_json's own visitor: a float JSON cannot hold becomes null.
        Ok(Slot::Value(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Slot, E> {
        Ok(Slot::Value(Value::String(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Slot, E> {
        Ok(Slot::Value(Value::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Slot, E> {
        Ok(Slot::Value(Value::Null))
    }
}

/// One element of a nested array: an object into slots, anything else as its `Value`.
struct ElementSeed(&'static Schema);

impl<'de> DeserializeSeed<'de> for ElementSeed {
    type Value = Result<Slots, Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ElementSeed {
    type Value = Result<Slots, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let slots = ObjectVisitor(self.0).visit_map(map)?;
        Ok(slots.ok_or(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Err)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Err(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Err(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Err(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Err(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Err(Value::String(v.to_owned())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Err(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::LazyLock;

    static ITEM: LazyLock<Schema> = LazyLock::new(|| Schema::new(vec!["sku", "qty"], &[]));
    static ORDER: LazyLock<Schema> =
        LazyLock::new(|| Schema::new(vec!["id", "name", "items"], &[("items", &ITEM)]));

    fn map(text: &str) -> Map<String, Value> {
        Slots::parse(text, &ORDER).unwrap().unwrap().into_map()
    }

    #[test]
    fn known_keys_fill_slots_and_unknown_ones_are_skipped() {
        let got =
            map(r#"{"x":{"deep":[1,2]},"name":"A","id":7,"items":[{"qty":2,"sku":"S","junk":1},5,[1]]}"#);
        assert_eq!(
            Value::Object(got),
            serde_json::json!({"id": 7, "name": "A", "items": [{"sku": "S", "qty": 2}, 5, [1]]})
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_a_map_does() {
        assert_eq!(map(r#"{"id":1,"id":2}"#)["id"], 2);
        let mut slots = Slots::parse(r#"{"name":null}"#, &ORDER).unwrap().unwrap();
        assert!(slots.take("id").is_none() && slots.take("nope").is_none());
        assert!(matches!(slots.take("name"), Some(Slot::Value(Value::Null))));
        assert!(slots.take("name").is_none());
    }

    #[test]
    fn a_nested_key_that_is_not_an_array_keeps_its_value() {
        for text in
            [r#"{"items":{"0":{"sku":"S"}}}"#, r#"{"items":"x"}"#, r#"{"items":null}"#, r#"{"items":1.5}"#]
        {
            let plain: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Value::Object(map(text)), plain, "{text}");
        }
    }

    #[test]
    fn what_is_not_an_object_or_not_json_is_told_apart() {
        for text in ["[1,{\"a\":2}]", "3", "\"s\"", "null", "true"] {
            assert!(Slots::parse(text, &ORDER).unwrap().is_none(), "{text}");
        }
        for text in ["{", "{\"id\":1} x", "[1,", "", "{\"items\":[{\"sku\":}]}"] {
            let ours = Slots::parse(text, &ORDER).unwrap_err().to_string();
            let theirs = serde_json::from_str::<Value>(text).unwrap_err().to_string();
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
