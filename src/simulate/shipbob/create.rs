//! A create's body held to `Orders.CreateOrderModel` as ShipBob's file describes it (read as
//! the vendor README says: a product is the by-reference form, its base's members
//! inherited), with each complaint keyed as ASP.NET keys its model state:
//! `Recipient.Address.Country`, `Products[0].Quantity`.

use serde_json::{Map, Value};

use super::data::NewOrder;

/// Member path -> messages, as ShipBob's 400 body holds them.
pub(super) type Complaints = Vec<(String, String)>;

/// `reference_id` -> `ReferenceId`, `address1` -> `Address1`.
fn pascal(member: &str) -> String {
    member
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |c| c.to_ascii_uppercase().to_string() + chars.as_str())
        })
        .collect()
}

struct Check<'a> {
    complaints: &'a mut Complaints,
}

impl Check<'_> {
    fn complain(&mut self, path: &str, message: impl Into<String>) {
        self.complaints.push((path.to_string(), message.into()));
    }

    /// An object whose members are among `known`, with `required` present.
    fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        known: &[&str],
        required: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.complain(path, "The value is not an object.");
            return None;
        };
        for key in map.keys().filter(|k| !known.contains(&k.as_str())) {
            self.complain(&join(path, key), format!("Could not find member '{key}' on object."));
        }
        for key in required.iter().filter(|k| !map.contains_key(**k)) {
            self.complain(&join(path, key), format!("The {} field is required.", pascal(key)));
        }
        Some(map)
    }

    /// A string member (absent is fine; null only when `nullable`) of `min..=max` characters.
    fn text(
        &mut self,
        path: &str,
        map: &Map<String, Value>,
        key: &str,
        nullable: bool,
        min: usize,
        max: usize,
    ) -> Option<String> {
        let at = join(path, key);
        match map.get(key) {
            None => None,
            Some(Value::Null) if nullable => None,
            Some(Value::String(s)) => {
                let n = s.chars().count();
                if n < min || n > max {
                    let field = pascal(key);
                    match max {
                        usize::MAX => self.complain(
                            &at,
                            format!("The field {field} must be at least {min} characters long."),
                        ),
                        _ => self.complain(
                            &at,
                            format!(
                                "The field {field} must be a string with a length between {min} and {max}."
                            ),
                        ),
                    }
                }
                Some(s.clone())
            }
            Some(_) => {
                self.complain(&at, "The value is not a string.");
                None
            }
        }
    }

    fn integer(
        &mut self,
        path: &str,
        map: &Map<String, Value>,
        key: &str,
        nullable: bool,
        min: i64,
    ) -> Option<i64> {
        let at = join(path, key);
        match map.get(key) {
            None => None,
            Some(Value::Null) if nullable => None,
            Some(v) => match v.as_i64().filter(|n| i32::try_from(*n).is_ok()) {
                Some(n) if n >= min => Some(n),
                Some(_) => {
                    self.complain(
                        &at,
                        format!("The field {} must be between {min} and 2147483647.", pascal(key)),
                    );
                    None
                }
                None => {
                    self.complain(&at, "The value is not a 32-bit integer.");
                    None
                }
            },
        }
    }

    fn date(&mut self, path: &str, map: &Map<String, Value>, key: &str) -> Option<String> {
        let text = self.text(path, map, key, true, 0, usize::MAX)?;
        let parsed = time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339);
        match parsed {
            Ok(at) => Some(
                at.format(&time::format_description::well_known::Rfc3339)
                    .unwrap_or(text)
                    .replace('Z', "+00:00"),
            ),
            Err(_) => {
                self.complain(&join(path, key), format!("The value '{text}' is not a valid date."));
                None
            }
        }
    }

    fn kind(&mut self, path: &str, value: &Value, want: fn(&Value) -> bool, what: &str) {
        if !want(value) {
            self.complain(path, format!("The value is not {what}."));
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { pascal(key) } else { format!("{path}.{}", pascal(key)) }
}

const ORDER: &[&str] = &[
    "financials",
    "gift_message",
    "location_id",
    "order_number",
    "origin_platform_program",
    "products",
    "purchase_date",
    "recipient",
    "reference_id",
    "requested_delivery_date",
    "retailer_program_data",
    "sales_channel",
    "shipping_method",
    "shipping_terms",
    "tags",
    "type",
];
const PRODUCT: &[&str] = &[
    "external_line_id",
    "gtin",
    "name",
    "quantity",
    "quantity_unit_of_measure_code",
    "reference_id",
    "sku",
    "unit_price",
    "upc",
];
const RECIPIENT: &[&str] = &["address", "email", "name", "phone_number"];
const ADDRESS: &[&str] = &["address1", "address2", "city", "company_name", "country", "state", "zip_code"];

/// The order a body asks for, or every complaint about it.
pub(super) fn read(body: &[u8]) -> Result<NewOrder, Complaints> {
    let mut complaints = Complaints::new();
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return Err(vec![(String::new(), format!("The JSON value could not be read: {e}"))]),
    };
    let mut check = Check { complaints: &mut complaints };
    let required = ["products", "recipient", "reference_id", "shipping_method", "type"];
    let Some(order) = check.object("", &value, ORDER, &required) else { return Err(complaints) };
    let reference_id = check.text("", order, "reference_id", false, 1, 300);
    let order_number = check.text("", order, "order_number", true, 0, 400);
    let shipping_method = check.text("", order, "shipping_method", false, 1, usize::MAX);
    let gift_message = check.text("", order, "gift_message", true, 0, 500);
    check.text("", order, "origin_platform_program", true, 0, 100);
    check.integer("", order, "location_id", true, i64::MIN);
    let purchase_date = check.date("", order, "purchase_date");
    check.date("", order, "requested_delivery_date");
    let kind = match order.get("type") {
        Some(Value::String(t)) if ["DTC", "DropShip", "B2B"].contains(&t.as_str()) => Some(t.clone()),
        Some(other) => {
            check.complain("Type", format!("The value {other} is not valid for Type."));
            None
        }
        None => None,
    };
    for key in ["financials", "retailer_program_data", "sales_channel", "shipping_terms"] {
        if let Some(v) = order.get(key).filter(|v| !v.is_null()) {
            check.kind(&pascal(key), v, Value::is_object, "an object");
        }
    }
    if let Some(tags) = order.get("tags").filter(|v| !v.is_null()) {
        match tags.as_array() {
            Some(tags) => {
                for (i, tag) in tags.iter().enumerate() {
                    let path = format!("Tags[{i}]");
                    if let Some(tag) = check.object(&path, tag, &["name", "value"], &["name", "value"]) {
                        check.text(&path, tag, "name", false, 1, 50);
                        check.text(&path, tag, "value", false, 1, 500);
                    }
                }
            }
            None => check.complain("Tags", "The value is not an array."),
        }
    }
    let recipient = order.get("recipient").cloned().unwrap_or(Value::Null);
    if order.contains_key("recipient")
        && let Some(r) = check.object("Recipient", &recipient, RECIPIENT, &["address", "name"])
    {
        check.text("Recipient", r, "name", false, 1, 300);
        check.text("Recipient", r, "phone_number", true, 0, 50);
        if let Some(email) = check.text("Recipient", r, "email", true, 0, usize::MAX) {
            let fits = email
                .split_once('@')
                .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('@'));
            if !fits {
                check.complain("Recipient.Email", "The Email field is not a valid e-mail address.");
            }
        }
        if let Some(address) = r.get("address")
            && let Some(a) =
                check.object("Recipient.Address", address, ADDRESS, &["address1", "city", "country"])
        {
            for key in ["address1", "city", "country"] {
                check.text("Recipient.Address", a, key, false, 1, usize::MAX);
            }
            for key in ["address2", "company_name", "state", "zip_code"] {
                check.text("Recipient.Address", a, key, true, 0, usize::MAX);
            }
        }
    }
    let mut products = Vec::new();
    match order.get("products") {
        None => {}
        Some(Value::Array(items)) if items.is_empty() => check.complain(
            "Products",
            "The field Products must be a string or array type with a minimum length of '1'.",
        ),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("Products[{i}]");
                let Some(p) = check.object(&path, item, PRODUCT, &["quantity", "reference_id", "name"])
                else {
                    continue;
                };
                let reference = check.text(&path, p, "reference_id", false, 1, usize::MAX);
                let name = check.text(&path, p, "name", true, 0, usize::MAX);
                let quantity = check.integer(&path, p, "quantity", false, 1);
                check.integer(&path, p, "external_line_id", true, i64::MIN);
                for (key, max) in [
                    ("gtin", 50),
                    ("upc", 50),
                    ("sku", usize::MAX),
                    ("quantity_unit_of_measure_code", usize::MAX),
                ] {
                    check.text(&path, p, key, true, 0, max);
                }
                let price = match p.get("unit_price") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let n = v.as_f64();
                        if n.is_none() {
                            check.complain(&format!("{path}.UnitPrice"), "The value is not a number.");
                        }
                        n
                    }
                };
                if let (Some(reference), Some(quantity)) = (reference, quantity) {
                    products.push((reference, name, quantity, price));
                }
            }
        }
        Some(_) => check.complain("Products", "The value is not an array."),
    }
    match (reference_id, shipping_method, kind) {
        (Some(reference_id), Some(shipping_method), Some(kind)) if complaints.is_empty() => Ok(NewOrder {
            reference_id,
            order_number,
            purchase_date,
            shipping_method,
            kind,
            gift_message,
            recipient,
            products,
        }),
        _ => Err(complaints),
    }
}
