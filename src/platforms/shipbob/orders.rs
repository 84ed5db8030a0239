//! Orders to ShipBob (annex §5) and their cancellation (§6): what is checked before a create,
//! the create's body, the answers to it (201 taken; 422 looked up by reference; another 4xx a
//! refusal quoted), the lookup before any create whose earlier try may have reached ShipBob,
//! and the cancel with its Get Order check.

use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::NAME;
use super::transport::{Api, Doubt};
use super::wire::{Canceled, Order};
use crate::dates::format_ms;
use crate::money;
use crate::platforms::PlatformError;
use crate::platforms::reference::References;
use crate::platforms::retry::Created;
use crate::platforms::warehouse::{Cancelled, HeldOrder, OutgoingOrder, SentOrder};

/// What the adapter says of the orders it sends.
#[derive(Debug, Clone, Default)]
pub struct Shaping {
    pub references: References,
    pub shipping_method: String,
    /// The adapter's `shipping_methods`, keys trimmed and in lower case.
    pub shipping_methods: Vec<(String, String)>,
}

impl Shaping {
    pub fn of(adapter: &Map<String, Value>) -> Shaping {
        let text = |key: &str| adapter.get(key).and_then(Value::as_str).map(str::to_string);
        let shipping_methods = adapter
            .get("shipping_methods")
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| Some((k.trim().to_lowercase(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Shaping {
            references: References::with_prefix(text("reference_prefix").unwrap_or_default()),
            shipping_method: text("shipping_method").unwrap_or_else(|| "Standard".to_string()),
            shipping_methods,
        }
    }

    fn shipping_method(&self, level: Option<&str>) -> String {
        match level.map(str::trim).filter(|l| !l.is_empty()) {
            Some(level) => {
                let key = level.to_lowercase();
                self.shipping_methods.iter().find(|(k, _)| *k == key).map_or(level, |(_, v)| v).to_string()
            }
            None => self.shipping_method.clone(),
        }
    }
}

/// "order 5 (external id 101)".
pub fn describe(order: &OutgoingOrder) -> String {
    match &order.external_id {
        Some(external) => format!("order {} (external id {external})", order.order_id),
        None => format!("order {}", order.order_id),
    }
}

/// The create's body (annex §5.3), or why the order cannot be sent (§5.1): nothing is sent
/// for it.
pub fn body(order: &OutgoingOrder, shaping: &Shaping) -> Result<Value, String> {
    let who = describe(order);
    let blank = |v: &Option<String>| v.as_deref().is_none_or(|s| s.trim().is_empty());
    let a = &order.ship_to;
    let name: String = [a.first_name.as_deref(), a.last_name.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut missing = Vec::new();
    if name.is_empty() {
        missing.push("a recipient name".to_string());
    }
    for (value, what) in [(&a.street1, "street1"), (&a.city, "city"), (&a.country, "country")] {
        if blank(value) {
            missing.push(format!("a shipping address {what}"));
        }
    }
    // One product per SKU, in the order of the items that ship a unit or more.
    let mut products: Vec<(String, Map<String, Value>)> = Vec::new();
    for (at, item) in order.items.iter().enumerate().filter(|(_, i)| i.quantity >= 1) {
        let Some(sku) = item.sku.as_deref().map(str::trim).filter(|s| !s.is_empty()) else {
            return Err(format!(
                "{who}: item {} has no SKU, and {NAME} needs one for every product, so it was not sent.",
                at + 1
            ));
        };
        match products.iter_mut().find(|(s, _)| s == sku) {
            Some((_, product)) => {
                let units = product["quantity"].as_i64().unwrap_or_default().saturating_add(item.quantity);
                product.insert("quantity".into(), json!(units));
            }
            None => {
                let mut product = Map::new();
                product.insert("reference_id".into(), json!(sku));
                product.insert(
                    "name".into(),
                    json!(item.name.as_deref().filter(|n| !n.trim().is_empty()).unwrap_or(sku)),
                );
                product.insert("quantity".into(), json!(item.quantity));
                if let Some(price) = item.unit_price {
                    product.insert("unit_price".into(), money::json_number(price));
                }
                products.push((sku.to_string(), product));
            }
        }
    }
    if products.is_empty() {
        missing.push("an item of 1 unit or more".to_string());
    }
    if !missing.is_empty() {
        return Err(format!(
            "{who} lacks {}, which {NAME} requires, so it was not sent.",
            missing.join(", ")
        ));
    }
    if let Some((_, p)) =
        products.iter().find(|(_, p)| p["quantity"].as_i64().is_none_or(|q| q > i64::from(i32::MAX)))
    {
        return Err(format!(
            "{who}: {} has more units than {NAME} takes, so it was not sent.",
            p["reference_id"]
        ));
    }
    let mut address = Map::new();
    let put = |map: &mut Map<String, Value>, key: &str, value: &Option<String>| {
        if let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            map.insert(key.into(), json!(v));
        }
    };
    put(&mut address, "address1", &a.street1);
    put(&mut address, "address2", &a.street2);
    put(&mut address, "city", &a.city);
    put(&mut address, "state", &a.region);
    put(&mut address, "zip_code", &a.postal_code);
    put(&mut address, "country", &a.country);
    let mut recipient = Map::new();
    recipient.insert("name".into(), json!(cut(&name, 300)));
    recipient.insert("address".into(), Value::Object(address));
    if let Some(email) = order.customer_email.as_deref().filter(|e| is_email(e)) {
        recipient.insert("email".into(), json!(email));
    }
    if let Some(phone) =
        a.telephone.as_deref().map(str::trim).filter(|p| !p.is_empty() && p.chars().count() <= 50)
    {
        recipient.insert("phone_number".into(), json!(phone));
    }
    let mut body = Map::new();
    body.insert("reference_id".into(), json!(shaping.references.of(order.order_id)));
    let number =
        order.external_display_id.as_deref().or(order.external_id.as_deref()).filter(|n| !n.is_empty());
    if let Some(number) = number {
        body.insert("order_number".into(), json!(cut(number, 400)));
    }
    body.insert("type".into(), json!("DTC"));
    body.insert("shipping_method".into(), json!(shaping.shipping_method(order.service_level.as_deref())));
    if let Some(at) = order.ordered_at {
        body.insert("purchase_date".into(), json!(whole_seconds(at)));
    }
    body.insert("recipient".into(), Value::Object(recipient));
    body.insert(
        "products".into(),
        Value::Array(products.into_iter().map(|(_, p)| Value::Object(p)).collect()),
    );
    if let Some(gift) = order.gift_message.as_deref().filter(|g| !g.trim().is_empty()) {
        body.insert("gift_message".into(), json!(cut(gift, 500)));
    }
    Ok(Value::Object(body))
}

fn cut(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// `local@domain`.
fn is_email(text: &str) -> bool {
    let mut parts = text.split('@');
    matches!((parts.next(), parts.next(), parts.next()), (Some(l), Some(d), None) if !l.is_empty() && !d.is_empty() && !text.contains(char::is_whitespace))
}

/// RFC 3339, UTC, whole seconds: `2026-11-28T09:12:40Z`.
pub fn whole_seconds(ms: i64) -> String {
    let text = format_ms(ms.div_euclid(1000) * 1000);
    match text.strip_suffix(".000Z") {
        Some(head) => format!("{head}Z"),
        None => text,
    }
}

/// What a create's answer said.
enum CreateAnswer {
    Made(i32),
    /// 422: ShipBob's answer to a reference it holds, or another refusal; the lookup says.
    Unprocessable(String),
    Refused(String),
}

/// Sends one order: created under its reference, never twice (annex §5.4). `Err` fails the
/// step (the token refused, or no verdict after the pass's tries).
pub async fn send(
    api: &Api,
    channel: i32,
    order: &OutgoingOrder,
    shaping: &Shaping,
) -> Result<SentOrder, PlatformError> {
    let body = match body(order, shaping) {
        Ok(body) => body,
        Err(why) => return Ok(SentOrder::Refused(why)),
    };
    let reference = shaping.references.of(order.order_id);
    let doubt = Doubt::default();
    // An earlier send may have created it: the lookup runs before its first create (annex §5.4).
    if order.in_doubt {
        doubt.raise();
    }
    let target = Api::path("order");
    let created = api
        .create(
            || async {
                // Only after a try that may have reached ShipBob is the reference looked up.
                if doubt.is_raised() {
                    lookup_once(api, channel, &reference).await.map(|o| o.map(CreateAnswer::Made))
                } else {
                    Ok(None)
                }
            },
            || async {
                let answer = match api.request(Method::POST, &target, Some(channel), Some(&body)).await {
                    Err(e) => {
                        if e.is_passing()
                            && !matches!(e, PlatformError::Unreachable { rate_limited: true, .. })
                        {
                            doubt.raise();
                        }
                        return Err(e);
                    }
                    Ok(answer) => answer,
                };
                Ok(match answer.status {
                    StatusCode::CREATED | StatusCode::OK => {
                        CreateAnswer::Made(api.read::<Order>(&answer, &target)?.id)
                    }
                    StatusCode::UNPROCESSABLE_ENTITY => {
                        CreateAnswer::Unprocessable(api.reasons(&answer.body))
                    }
                    _ => CreateAnswer::Refused(refusal(api, &answer.body, answer.status)),
                })
            },
        )
        .await?;
    let answer = match created {
        Created::AlreadyThere(answer) | Created::Now(answer) => answer,
    };
    Ok(match answer {
        CreateAnswer::Made(id) => SentOrder::Accepted { warehouse_order_id: Some(id.to_string()) },
        CreateAnswer::Unprocessable(said) => match lookup(api, channel, &reference).await? {
            Some(id) => SentOrder::Accepted { warehouse_order_id: Some(id.to_string()) },
            None => {
                SentOrder::Refused(format!("{NAME} refused {}: {}", describe(order), or_status(said, 422)))
            }
        },
        CreateAnswer::Refused(said) => {
            SentOrder::Refused(format!("{NAME} refused {}: {said}", describe(order)))
        }
    })
}

fn refusal(api: &Api, body: &[u8], status: StatusCode) -> String {
    or_status(api.reasons(body), status.as_u16())
}

fn or_status(said: String, status: u16) -> String {
    if said.is_empty() { format!("HTTP {status}") } else { said }
}

/// The order ShipBob holds under `reference`, tried again on passing failures (annex §5.5).
pub async fn lookup(api: &Api, channel: i32, reference: &str) -> Result<Option<i32>, PlatformError> {
    let target = format!("{}?ReferenceIds={reference}", Api::path("order"));
    let answer = api.send(Method::GET, &target, Some(channel), None).await?;
    found(api, &answer, &target, reference)
}

/// As [`lookup`], one try: `retry::create` tries it again itself.
async fn lookup_once(api: &Api, channel: i32, reference: &str) -> Result<Option<i32>, PlatformError> {
    let target = format!("{}?ReferenceIds={reference}", Api::path("order"));
    let answer = api.request(Method::GET, &target, Some(channel), None).await?;
    found(api, &answer, &target, reference)
}

fn found(
    api: &Api,
    answer: &super::transport::Answer,
    target: &str,
    reference: &str,
) -> Result<Option<i32>, PlatformError> {
    let orders: Vec<Order> = api.read(answer, target)?;
    Ok(orders.into_iter().find(|o| o.reference_id.as_deref() == Some(reference)).map(|o| o.id))
}

/// Cancels an order ShipBob holds (annex §6): `Done` when ShipBob cancelled it (now, or an
/// earlier try or someone in ShipBob's app did), else its reasons.
pub async fn cancel(api: &Api, channel: i32, held: &HeldOrder) -> Result<Cancelled, PlatformError> {
    let id = &held.warehouse_order_id;
    let target = format!("{}:cancel", Api::path(&format!("order/{id}")));
    let answer = api.send(Method::POST, &target, Some(channel), None).await?;
    let refused = match answer.status {
        StatusCode::OK => {
            let said: Canceled = api.read(&answer, &target)?;
            if said.status.as_deref() == Some("Success") {
                return Ok(Cancelled::Done);
            }
            let reasons: Vec<String> = said
                .canceled_shipment_results
                .unwrap_or_default()
                .into_iter()
                .filter(|r| r.is_success != Some(true))
                .map(|r| match (r.shipment_id, r.reason) {
                    (Some(shipment), Some(reason)) => format!("Shipment {shipment}: {reason}"),
                    (None, Some(reason)) => reason,
                    (Some(shipment), None) => format!("Shipment {shipment} could not be cancelled"),
                    (None, None) => "a shipment could not be cancelled".to_string(),
                })
                .collect();
            if reasons.is_empty() {
                said.status.unwrap_or_else(|| "no reason given".into())
            } else {
                reasons.join("; ")
            }
        }
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::UNPROCESSABLE_ENTITY => {
            refusal(api, &answer.body, answer.status)
        }
        _ => return Err(api.refused(&answer, &target)),
    };
    // An earlier try whose answer was lost, or someone in ShipBob's app, may have cancelled it.
    let target = Api::path(&format!("order/{id}"));
    let answer = api.send(Method::GET, &target, Some(channel), None).await?;
    if answer.status == StatusCode::OK
        && api.read::<Order>(&answer, &target)?.status.as_deref() == Some("Cancelled")
    {
        return Ok(Cancelled::Done);
    }
    Ok(Cancelled::Refused(refused))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::warehouse::{OutgoingItem, ShipTo};

    fn order() -> OutgoingOrder {
        let item = |sku: &str, name: &str, quantity, price| OutgoingItem {
            sku: Some(sku.into()),
            name: Some(name.into()),
            quantity,
            unit_price: price,
            ..OutgoingItem::default()
        };
        OutgoingOrder {
            order_id: 5,
            external_id: Some("101".into()),
            external_display_id: Some("101".into()),
            store_id: 1,
            ordered_at: Some(1_795_857_160_123),
            customer_email: Some("jane@example.com".into()),
            ship_to: ShipTo {
                first_name: Some("Jane".into()),
                last_name: Some("Doe".into()),
                street1: Some("455 Main Street".into()),
                street2: Some("Suite 4".into()),
                city: Some("Austin".into()),
                region: Some("Texas".into()),
                postal_code: Some("78751".into()),
                country: Some("US".into()),
                telephone: Some("512-555-0100".into()),
            },
            carrier: None,
            service_level: Some("UPS Ground".into()),
            gift_message: None,
            notes: None,
            items: vec![
                item("MUG-BLUE", "Blue mug", 1, Some(1250)),
                item("TEA-GRN", "Green tea", 1, None),
                item("MUG-BLUE", "Blue mug again", 1, Some(999)),
                item("GONE", "Refunded", 0, None),
            ],
            ..OutgoingOrder::default()
        }
    }

    #[test]
    fn the_body_is_the_annexs_with_one_product_per_sku() {
        let body = body(&order(), &Shaping::of(&Map::new())).unwrap();
        assert_eq!(
            body,
            json!({"reference_id": "ob-5", "order_number": "101", "type": "DTC", "shipping_method": "UPS Ground",
                   "purchase_date": "2026-11-28T09:12:40Z",
                   "recipient": {"name": "Jane Doe", "email": "jane@example.com", "phone_number": "512-555-0100",
                     "address": {"address1": "455 Main Street", "address2": "Suite 4", "city": "Austin",
                                 "state": "Texas", "zip_code": "78751", "country": "US"}},
                   "products": [{"reference_id": "MUG-BLUE", "name": "Blue mug", "quantity": 2, "unit_price": 12.5},
                                {"reference_id": "TEA-GRN", "name": "Green tea", "quantity": 1}]})
        );
    }

    #[test]
    fn an_order_shipbob_cannot_take_says_what_it_lacks() {
        let mut no_sku = order();
        no_sku.items[1].sku = None;
        assert_eq!(
            body(&no_sku, &Shaping::default()).unwrap_err(),
            "order 5 (external id 101): item 2 has no SKU, and ShipBob needs one for every product, so it was not sent."
        );
        let mut bare = order();
        bare.ship_to = ShipTo::default();
        bare.items.clear();
        let why = body(&bare, &Shaping::default()).unwrap_err();
        assert!(why.contains("a recipient name, a shipping address street1, a shipping address city, a shipping address country, an item of 1 unit or more"), "{why}");
    }

    #[test]
    fn shipping_methods_map_names_trimmed_and_in_any_case() {
        let adapter = json!({"shipping_method": "Economy", "shipping_methods": {" ups ground ": "Ground"}});
        let shaping = Shaping::of(adapter.as_object().unwrap());
        assert_eq!(shaping.shipping_method(Some("UPS Ground")), "Ground");
        assert_eq!(shaping.shipping_method(Some("Overnight")), "Overnight");
        assert_eq!(shaping.shipping_method(None), "Economy");
        assert_eq!(Shaping::of(&Map::new()).shipping_method(Some(" ")), "Standard");
    }
}
