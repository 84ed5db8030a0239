//! Orders to ShipStation (annex §5.2, §5.3) and their cancellation (§5.4): the shipment object
//! of each order (or why orderbridge itself cannot send it), batches of at most 50 in one
//! `POST /v2/shipments`, each answer entry matched by `external_shipment_id`, a whole batch
//! refused with 400/422 sent again one order at a time, and an order whose create may have
//! reached ShipStation (no verdict, left out of the answer, or refused in its entry: a crash
//! may have sent it before) looked up by its reference before it is sent again.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::money;
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::NAME;
use super::transport::Api;
use super::wire::{Created, Shipment};
use crate::platforms::PlatformError;
use crate::platforms::reference::References;
use crate::platforms::retry::{self, RetryPolicy};
use crate::platforms::warehouse::{Cancelled, HeldOrder, OutgoingOrder, SentOrder};

/// Orders in one `POST /v2/shipments` (annex §5.2).
pub const BATCH: usize = 50;

/// What the adapter says of the orders it sends and the labels it reads.
#[derive(Debug, Clone, Default)]
pub struct Shaping {
    pub references: References,
    pub carrier_id: Option<String>,
    pub warehouse_id: Option<String>,
    /// The unit of the store's item weights (`pound` when unset).
    pub weight_unit: String,
}

impl Shaping {
    pub fn of(adapter: &Map<String, Value>) -> Shaping {
        let text = |key: &str| adapter.get(key).and_then(Value::as_str).map(str::to_string);
        Shaping {
            references: References::with_prefix(text("reference_prefix").unwrap_or_default()),
            carrier_id: text("carrier_id"),
            warehouse_id: text("warehouse_id"),
            weight_unit: text("weight_unit").unwrap_or_else(|| "pound".to_string()),
        }
    }
}

fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// The shipment object of one order (annex §5.2), or the problem that keeps orderbridge from
/// sending it: ShipStation requires every field of `ship_to` it lacks.
pub fn body(order: &OutgoingOrder, shaping: &Shaping, ship_from: Option<&Value>) -> Result<Value, String> {
    let (a, billing) = (&order.ship_to, &order.bill_to);
    let name_of = |address: &crate::platforms::warehouse::ShipTo| {
        [address.first_name.as_deref(), address.last_name.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The shipping address's name and phone, else the billing address's (annex §5.2).
    let name = Some(name_of(a)).filter(|n| !n.is_empty()).unwrap_or_else(|| name_of(billing));
    let phone = present(&a.telephone).or(present(&billing.telephone)).map(str::to_string);
    let mut ship_to = Map::new();
    let mut missing = None;
    let mut put = |key: &str, value: Option<String>, required: bool| match value {
        Some(v) => {
            ship_to.insert(key.into(), json!(v));
        }
        None if required => {
            missing.get_or_insert_with(|| key.to_string());
        }
        None => {}
    };
    put("name", Some(name).filter(|n| !n.is_empty()), true);
    put("phone", phone, true);
    put("email", present(&order.customer_email).map(str::to_string), false);
    put("address_line1", present(&a.street1).map(str::to_string), true);
    put("address_line2", present(&a.street2).map(str::to_string), false);
    put("city_locality", present(&a.city).map(str::to_string), true);
    put("state_province", present(&a.region).map(str::to_string), true);
    put("postal_code", present(&a.postal_code).map(str::to_string), true);
    put("country_code", present(&a.country).map(str::to_uppercase), true);
    if let Some(field) = missing {
        return Err(format!(
            "{NAME} requires ship_to.{field}; order {} has none in its shipping or billing address",
            order.order_id
        ));
    }
    ship_to.insert("address_residential_indicator".into(), json!("unknown"));
    let mut shipment = Map::new();
    shipment.insert("external_shipment_id".into(), json!(shaping.references.of(order.order_id)));
    shipment.insert("validate_address".into(), json!("no_validation"));
    shipment.insert("ship_to".into(), Value::Object(ship_to));
    if let Some(from) = ship_from {
        shipment.insert("ship_from".into(), from.clone());
    }
    if let Some(carrier) = &shaping.carrier_id {
        shipment.insert("carrier_id".into(), json!(carrier));
    }
    if let Some(notes) = present(&order.notes) {
        shipment.insert("notes_from_buyer".into(), json!(notes));
    }
    if let Some(gift) = present(&order.gift_message) {
        shipment.insert("is_gift".into(), json!(true));
        shipment.insert("notes_for_gift".into(), json!(gift));
    }
    if let Some(currency) = present(&order.currency_code).map(str::to_lowercase) {
        for (key, amount) in [("shipping_paid", order.shipping_amount), ("tax_paid", order.tax_amount)] {
            if let Some(amount) = amount {
                shipment
                    .insert(key.into(), json!({"currency": currency, "amount": money::json_number(amount)}));
            }
        }
    }
    let items: Vec<Value> = order
        .items
        .iter()
        .filter(|i| i.quantity >= 1)
        .map(|item| {
            let mut out = Map::new();
            out.insert("name".into(), json!(item.name.clone().unwrap_or_default()));
            out.insert("quantity".into(), json!(item.quantity));
            if let Some(sku) = present(&item.sku) {
                out.insert("sku".into(), json!(sku));
            }
            if let Some(price) = item.unit_price {
                out.insert("unit_price".into(), money::json_number(price));
            }
            if let Some(tax) = item.tax_amount {
                out.insert("tax_amount".into(), money::json_number(tax));
            }
            if let Some(upc) = present(&item.upc) {
                out.insert("upc".into(), json!(upc));
            }
            if let Some(line) = present(&item.external_order_item_id) {
                out.insert("external_order_item_id".into(), json!(line));
            }
            if let Some(weight) = item.weight.filter(|w| *w > 0) {
                out.insert(
                    "weight".into(),
                    json!({"value": money::json_number(weight), "unit": shaping.weight_unit}),
                );
            }
            Value::Object(out)
        })
        .collect();
    shipment.insert("items".into(), Value::Array(items));
    Ok(Value::Object(shipment))
}

/// One order on its way: its id, reference and shipment object.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub order_id: i64,
    pub reference: String,
    pub body: Value,
    /// An earlier send may have created it (annex §5.3, the mark in the database): looked up
    /// before it is created.
    pub in_doubt: bool,
}

/// What a run of batches did: the orders answered for, and why it stopped early, if it did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub orders: Vec<(i64, SentOrder)>,
    pub failure: Option<PlatformError>,
}

/// Sends `orders` in batches of at most [`BATCH`] (annex §5.2, §5.3). Each order is created at
/// most once: after a try whose outcome is unknown, an answer that leaves it out, or an entry
/// that refuses it, its reference is looked up before anything else is sent for it.
pub async fn send(api: &Api, orders: Vec<Prepared>) -> Outcome {
    let mut outcome = Outcome::default();
    let mut queue: VecDeque<Vec<Prepared>> = orders.chunks(BATCH).map(<[Prepared]>::to_vec).collect();
    while let Some(batch) = queue.pop_front() {
        match send_batch(api, batch).await {
            Batch::Done(answered) => outcome.orders.extend(answered),
            Batch::Split(answered, batch) => {
                outcome.orders.extend(answered);
                queue.extend(batch.into_iter().map(|one| vec![one]));
            }
            Batch::Failed(answered, e) => {
                outcome.orders.extend(answered);
                outcome.failure = Some(e);
                return outcome;
            }
        }
    }
    outcome
}

enum Batch {
    Done(Vec<(i64, SentOrder)>),
    /// 400/422 to a batch of several: the orders answered for, and the rest, each sent again
    /// alone.
    Split(Vec<(i64, SentOrder)>, Vec<Prepared>),
    Failed(Vec<(i64, SentOrder)>, PlatformError),
}

/// One batch, tried again on passing failures; never creates an order twice.
async fn send_batch(api: &Api, batch: Vec<Prepared>) -> Batch {
    let policy = &api.policy;
    let once = RetryPolicy { tries: 1, ..*policy };
    let target = "/v2/shipments";
    let mut answered: Vec<(i64, SentOrder)> = Vec::new();
    // Orders a try (of this pass or an earlier one) may have created: looked up before the next.
    let mut doubt: HashSet<i64> = batch.iter().filter(|o| o.in_doubt).map(|o| o.order_id).collect();
    let mut pending: Vec<Prepared> = batch;
    // Refusals from an entry, kept while the lookup says whether an earlier try made it.
    let mut refusals: HashMap<i64, String> = HashMap::new();
    for tries in 1..=policy.tries.max(1) {
        let mut still = Vec::new();
        for order in pending {
            if !doubt.contains(&order.order_id) {
                still.push(order);
                continue;
            }
            match lookup(api, &order.reference).await {
                Ok(Some(id)) => {
                    answered.push((order.order_id, SentOrder::Accepted { warehouse_order_id: Some(id) }))
                }
                Ok(None) => match refusals.remove(&order.order_id) {
                    Some(why) => answered.push((order.order_id, SentOrder::Refused(why))),
                    None => still.push(order),
                },
                Err(e) => return Batch::Failed(answered, e),
            }
        }
        doubt.clear();
        pending = still;
        if pending.is_empty() {
            return Batch::Done(answered);
        }
        let body = json!({"shipments": pending.iter().map(|o| o.body.clone()).collect::<Vec<_>>()});
        let result =
            retry::send(&once, api.account.as_str(), || api.request(Method::POST, target, Some(&body))).await;
        let answer = match result {
            Ok(answer) => answer,
            Err(e) if e.is_passing() => {
                if !matches!(e, PlatformError::Unreachable { rate_limited: true, .. }) {
                    doubt.extend(pending.iter().map(|o| o.order_id));
                }
                if tries == policy.tries.max(1) {
                    return Batch::Failed(answered, e);
                }
                if !matches!(e, PlatformError::Unreachable { rate_limited: true, .. }) {
                    tokio::time::sleep(retry::wait_before(policy, tries + 1, &e)).await;
                }
                continue;
            }
            Err(e) => return Batch::Failed(answered, e),
        };
        match answer.status {
            s if s.is_success() => {
                let created: Created = match api.read(&answer, &Method::POST, target) {
                    Ok(created) => created,
                    Err(e) => return Batch::Failed(answered, e),
                };
                let mut by_reference: HashMap<String, Shipment> = created
                    .shipments
                    .into_iter()
                    .filter_map(|s| Some((s.external_shipment_id.clone()?, s)))
                    .collect();
                for order in &pending {
                    match by_reference.remove(&order.reference) {
                        Some(Shipment { errors: Some(errors), .. }) if !errors.is_empty() => {
                            let said = errors.iter().map(|e| quote(api, e)).collect::<Vec<_>>().join("; ");
                            refusals.insert(
                                order.order_id,
                                format!("{NAME} refused order {}: {said}", order.order_id),
                            );
                            doubt.insert(order.order_id);
                        }
                        Some(Shipment { shipment_id: Some(id), .. }) if !id.is_empty() => answered
                            .push((order.order_id, SentOrder::Accepted { warehouse_order_id: Some(id) })),
                        // Left out, or without an id: as a lost answer.
                        _ => {
                            doubt.insert(order.order_id);
                        }
                    }
                }
                pending.retain(|o| doubt.contains(&o.order_id));
                if pending.is_empty() {
                    return Batch::Done(answered);
                }
            }
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY if pending.len() > 1 => {
                // Nothing of the request was created: each order is sent again alone.
                return Batch::Split(answered, pending);
            }
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => {
                let order = &pending[0];
                let said = api.reason(&answer.body, false);
                let said = if said.is_empty() { format!("HTTP {}", answer.status.as_u16()) } else { said };
                answered.push((
                    order.order_id,
                    SentOrder::Refused(format!("{NAME} refused order {}: {said}", order.order_id)),
                ));
                return Batch::Done(answered);
            }
            _ => return Batch::Failed(answered, api.refused(&answer, &Method::POST, target)),
        }
    }
    // The last try's answer left orders in doubt: one more look settles them.
    let mut failure = None;
    for order in pending {
        match lookup(api, &order.reference).await {
            Ok(Some(id)) => {
                answered.push((order.order_id, SentOrder::Accepted { warehouse_order_id: Some(id) }))
            }
            Ok(None) => match refusals.remove(&order.order_id) {
                Some(why) => answered.push((order.order_id, SentOrder::Refused(why))),
                None => {
                    failure.get_or_insert_with(|| {
                        PlatformError::unreachable(format!(
                            "{NAME} did not answer for order {}.",
                            order.order_id
                        ))
                    });
                }
            },
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    match failure {
        Some(e) => Batch::Failed(answered, e),
        None => Batch::Done(answered),
    }
}

fn quote(api: &Api, text: &str) -> String {
    let body = json!({"errors": [{"message": text}]}).to_string();
    api.reason(body.as_bytes(), false)
}

/// The `shipment_id` ShipStation holds under `reference` (annex §5.3): 404 is none; anything
/// else but 200 is a failure of the step.
pub async fn lookup(api: &Api, reference: &str) -> Result<Option<String>, PlatformError> {
    let target = format!("/v2/shipments/external_shipment_id/{reference}");
    let answer = api.send(Method::GET, &target).await?;
    if answer.status == StatusCode::NOT_FOUND {
        return Ok(None);
    }
    let shipment: Shipment = api.read(&answer, &Method::GET, &target)?;
    match shipment.shipment_id.filter(|id| !id.is_empty()) {
        Some(id) => Ok(Some(id)),
        None => Err(PlatformError::BadData(format!("{NAME}'s shipment {reference} has no shipment_id."))),
    }
}

/// Cancels a pending shipment (annex §5.4): 2xx done; 400, 404 or 409 refused, quoting
/// ShipStation (a label that is not voided).
pub async fn cancel(api: &Api, held: &HeldOrder) -> Result<Cancelled, PlatformError> {
    let id = &held.warehouse_order_id;
    // Only an id of ShipStation's shape goes into the path: another could lead elsewhere.
    if !super::is_se_id(id) {
        return Err(PlatformError::BadData(format!(
            "order {} is held under {id:?}, which is not a {NAME} shipment id; nothing was sent.",
            held.order_id
        )));
    }
    let target = format!("/v2/shipments/{id}/cancel");
    let answer = api.send(Method::PUT, &target).await?;
    match answer.status {
        s if s.is_success() => Ok(Cancelled::Done),
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::CONFLICT => {
            let said = api.reason(&answer.body, false);
            Ok(Cancelled::Refused(if said.is_empty() {
                format!("HTTP {}", answer.status.as_u16())
            } else {
                said
            }))
        }
        _ => Err(api.refused(&answer, &Method::PUT, &target)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::warehouse::{OutgoingItem, ShipTo};

    /// The annex's order 4312 (§7.1): no phone in its shipping address, one in its billing.
    pub fn order() -> OutgoingOrder {
        OutgoingOrder {
            order_id: 4312,
            customer_email: Some("ada@example.com".into()),
            bill_to: ShipTo { telephone: Some("+1 512 555 0100".into()), ..ShipTo::default() },
            currency_code: Some("USD".into()),
            shipping_amount: Some(850),
            tax_amount: Some(140),
            ship_to: ShipTo {
                first_name: Some("Ada".into()),
                last_name: Some("Lovelace".into()),
                street1: Some("12 Byron Road".into()),
                street2: Some("Apt 3".into()),
                city: Some("Austin".into()),
                region: Some("TX".into()),
                postal_code: Some("78701".into()),
                country: Some("us".into()),
                telephone: None,
            },
            notes: Some("Leave at the blue door".into()),
            items: vec![
                OutgoingItem {
                    sku: Some("MUG-1".into()),
                    name: Some("Tea Mug".into()),
                    quantity: 2,
                    unit_price: Some(1250),
                    weight: Some(75),
                    tax_amount: Some(70),
                    upc: Some("0001234".into()),
                    external_order_item_id: Some("5001".into()),
                },
                OutgoingItem {
                    sku: None,
                    name: Some("Gift wrap".into()),
                    quantity: 1,
                    unit_price: Some(100),
                    weight: Some(0),
                    tax_amount: Some(0),
                    upc: None,
                    external_order_item_id: Some("5002".into()),
                },
                OutgoingItem {
                    sku: Some("GONE".into()),
                    name: None,
                    quantity: 0,
                    unit_price: None,
                    weight: None,
                    ..OutgoingItem::default()
                },
            ],
            ..OutgoingOrder::default()
        }
    }

    #[test]
    fn the_shipment_object_is_the_annexs() {
        let shaping =
            Shaping { carrier_id: Some("se-1001".into()), weight_unit: "pound".into(), ..Shaping::default() };
        assert_eq!(
            body(&order(), &shaping, None).unwrap(),
            json!({"external_shipment_id": "ob-4312", "validate_address": "no_validation",
                   "ship_to": {"name": "Ada Lovelace", "phone": "+1 512 555 0100", "email": "ada@example.com",
                               "address_line1": "12 Byron Road", "address_line2": "Apt 3", "city_locality": "Austin",
                               "state_province": "TX", "postal_code": "78701", "country_code": "US",
                               "address_residential_indicator": "unknown"},
                   "carrier_id": "se-1001", "notes_from_buyer": "Leave at the blue door",
                   "shipping_paid": {"currency": "usd", "amount": 8.5},
                   "tax_paid": {"currency": "usd", "amount": 1.4},
                   "items": [{"name": "Tea Mug", "quantity": 2, "sku": "MUG-1", "unit_price": 12.5, "tax_amount": 0.7,
                              "upc": "0001234", "external_order_item_id": "5001",
                              "weight": {"value": 0.75, "unit": "pound"}},
                             {"name": "Gift wrap", "quantity": 1, "unit_price": 1, "tax_amount": 0,
                              "external_order_item_id": "5002"}]})
        );
        let mut gift = order();
        gift.gift_message = Some("Happy birthday".into());
        let from = json!({"name": "Dock 3"});
        let made =
            body(&gift, &Shaping { references: References::with_prefix("eu."), ..shaping }, Some(&from))
                .unwrap();
        assert_eq!(
            (made["is_gift"].clone(), made["notes_for_gift"].clone()),
            (json!(true), json!("Happy birthday"))
        );
        assert_eq!(
            (made["external_shipment_id"].clone(), made["ship_from"].clone()),
            (json!("eu.ob-4312"), from)
        );
    }

    #[test]
    fn an_order_without_a_required_field_is_refused_by_orderbridge_naming_it() {
        let mut no_phone = order();
        no_phone.ship_to.telephone = Some(" ".into());
        no_phone.bill_to.telephone = None;
        assert_eq!(
            body(&no_phone, &Shaping::default(), None).unwrap_err(),
            "ShipStation requires ship_to.phone; order 4312 has none in its shipping or billing address"
        );
        // A name from the billing address when the shipping address has none.
        let mut billed = order();
        billed.ship_to.first_name = None;
        billed.ship_to.last_name = None;
        billed.bill_to.first_name = Some("Ada".into());
        billed.bill_to.last_name = Some("King".into());
        assert_eq!(body(&billed, &Shaping::default(), None).unwrap()["ship_to"]["name"], "Ada King");
        let mut no_region = order();
        no_region.ship_to.region = None;
        assert!(body(&no_region, &Shaping::default(), None).unwrap_err().contains("ship_to.state_province"));
    }
}
