//! BigCommerce's v2 orders as orderbridge reads them: only the fields the §11 mapping uses,
//! typed; every other field is skipped unread, which is most of an order (a listed order
//! with its consignments is ~4 KB of JSON, of which the mapping reads a tenth).
//!
//! BigCommerce sends numbers as text ("12.5000") and, in some stores, text as numbers, so a
//! scalar field is a [`Scalar`] that keeps what came and is read as the mapping needs it. An
//! address or a consignment list that is not the object the description says is read as
//! absent, as the mapping did with untyped JSON.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A scalar field as it came.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Scalar {
    /// Not sent, or `null`.
    #[default]
    Absent,
    Text(String),
    Number(serde_json::Number),
    /// A boolean, an array or an object where a scalar was expected.
    Other,
}

impl Scalar {
    /// As the import takes text: empty text is null, a number is its text.
    pub fn text(&self) -> Value {
        match self {
            Scalar::Text(s) if !s.trim().is_empty() => Value::String(s.clone()),
            Scalar::Number(n) => Value::String(n.to_string()),
            _ => Value::Null,
        }
    }

    /// A whole number, sent as a number or as text.
    pub fn integer(&self) -> Option<i64> {
        match self {
            Scalar::Number(n) => n.as_i64(),
            Scalar::Text(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The value as JSON, for the money and date readers that take one.
    pub fn json(&self) -> Value {
        match self {
            Scalar::Absent => Value::Null,
            Scalar::Text(s) => Value::String(s.clone()),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::Other => Value::Bool(false),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar::Text(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Scalar::Other, Scalar::Number))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Absent)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

/// What the list says of an order before it is wanted whole.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Listed {
    pub id: Scalar,
    pub date_modified: Scalar,
    pub status_id: Scalar,
}

/// An order of `GET v2/orders` (`order_Resp`), as far as the mapping reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Order {
    pub id: Scalar,
    pub customer_id: Scalar,
    pub date_created: Scalar,
    pub payment_method: Scalar,
    pub currency_code: Scalar,
    pub shipping_cost_ex_tax: Scalar,
    pub shipping_cost_tax: Scalar,
    pub total_tax: Scalar,
    pub discount_amount: Scalar,
    pub customer_message: Scalar,
    #[serde(deserialize_with = "object_or_absent")]
    pub billing_address: Option<Address>,
    /// The shipping consignments, when the list carried consignments in their object form.
    #[serde(deserialize_with = "shipping_consignments")]
    pub consignments: Option<Vec<Address>>,
}

/// A billing address, an entry of `shipping_addresses` (`orderShippingAddress`) or a shipping
/// consignment (`shippingConsignment_Get`): the same address fields, and for the last two an
/// `id` (the order address id a shipment names) and a `shipping_method`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Address {
    pub id: Scalar,
    pub first_name: Scalar,
    pub last_name: Scalar,
    pub street_1: Scalar,
    pub street_2: Scalar,
    pub city: Scalar,
    pub state: Scalar,
    pub zip: Scalar,
    pub country_iso2: Scalar,
    pub phone: Scalar,
    pub email: Scalar,
    pub shipping_method: Scalar,
    /// A consignment's lines: order products, or links to them when only
    /// `include=consignments` was asked.
    pub line_items: Option<Vec<Line>>,
}

/// An order product (`orderProducts`), of `products` or of a consignment's `line_items`; a
/// link (`{"url", "resource"}`) has none of these fields.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Line {
    pub id: Scalar,
    pub product_id: Scalar,
    pub name: Scalar,
    pub sku: Scalar,
    pub upc: Scalar,
    pub quantity: Scalar,
    pub price_ex_tax: Scalar,
    pub weight: Scalar,
    pub total_tax: Scalar,
}

/// An object read as `T`; anything else (a string, an array, `null`) as `None`.
fn object_or_absent<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    struct ObjectVisitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<T>, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<T>, E> {
            Ok(None)
        }
    }
    d.deserialize_any(ObjectVisitor(std::marker::PhantomData))
}

/// `consignments` in their object form (`orderConsignment_Get`): its `shipping` list; the
/// link form (`orderConsignments_Resource`) and anything else: `None`.
fn shipping_consignments<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Address>>, D::Error> {
    #[derive(Deserialize)]
    struct Consignments {
        shipping: Option<Vec<Address>>,
    }
    Ok(object_or_absent::<D, Consignments>(d)?.and_then(|c| c.shipping))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_keep_what_came_and_read_as_the_mapping_needs() {
        let cases = [
            ("\"12.5000\"", Scalar::Text("12.5000".into()), Value::from("12.5000"), None),
            ("7", Scalar::Number(7.into()), Value::from("7"), Some(7)),
            ("\" 8 \"", Scalar::Text(" 8 ".into()), Value::from(" 8 "), Some(8)),
            ("\"\"", Scalar::Text(String::new()), Value::Null, None),
            ("null", Scalar::Absent, Value::Null, None),
            ("true", Scalar::Other, Value::Null, None),
            ("[1, 2]", Scalar::Other, Value::Null, None),
            ("{\"a\": 1}", Scalar::Other, Value::Null, None),
        ];
        for (json, scalar, text, integer) in cases {
            let read: Scalar = serde_json::from_str(json).unwrap();
            assert_eq!((&read, read.text(), read.integer()), (&scalar, text, integer), "{json}");
        }
    }

    #[test]
    fn consignments_are_read_only_in_their_object_form() {
        let read = |json: &str| serde_json::from_str::<Order>(json).unwrap().consignments.map(|c| c.len());
        assert_eq!(read(r#"{"consignments": {"pickups": [], "shipping": [{"id": 1}, {"id": 2}]}}"#), Some(2));
        assert_eq!(read(r#"{"consignments": {"url": "u", "resource": "/orders/1/consignments"}}"#), None);
        assert_eq!(read(r#"{"consignments": [{"shipping": {"id": 1}}]}"#), None);
        assert_eq!(read(r#"{"consignments": null}"#), None);
        assert_eq!(read(r#"{}"#), None);
        let billing = |json: &str| serde_json::from_str::<Order>(json).unwrap().billing_address.is_some();
        assert!(billing(r#"{"billing_address": {"zip": "1"}}"#));
        assert!(!billing(r#"{"billing_address": "none"}"#));
    }
}
