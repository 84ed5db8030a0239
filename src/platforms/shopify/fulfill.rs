//! Notify through fulfillment orders (annex §11 Shopify, *Notify*). Every try first reads
//! the order's fulfillments and fulfillment orders: a live fulfillment with the shipment's
//! tracking number means Shopify has it already (an earlier try whose answer, or whose
//! commit, was lost), so the customer is never told twice; `fulfillmentCreate` takes no
//! idempotency key. Otherwise the shipment's units are taken from the fulfillment-order
//! lines of its order lines, at one location, and sent as one fulfillment.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Value, json};

use super::Client;
use super::documents::{FULFILLMENT_CREATE, FULFILLMENT_ORDER_LINE_ITEMS, FULFILLMENT_STATE};
use super::orders::Connection;
use crate::platforms::PlatformError;
use crate::platforms::retry::Created;
use crate::platforms::store::{Notified, ShipmentNotice};

/// Shopify's limit on an input array.
const MAX_INPUT_ITEMS: usize = 250;

/// Pages of fulfillment orders (or of one's lines) read at most for one notice.
const MAX_PAGES: usize = 200;

/// What a notification knows of the order.
#[derive(Debug, Default)]
pub(crate) struct State {
    cancelled: bool,
    fulfillments: Vec<Fulfillment>,
    fulfillment_orders: Vec<FulfillmentOrder>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct OrderState {
    cancelled_at: Option<String>,
    fulfillments: Vec<Fulfillment>,
    fulfillment_orders: Connection<FulfillmentOrder>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Fulfillment {
    status: String,
    tracking_info: Vec<Tracking>,
}

#[derive(Deserialize, Debug)]
struct Tracking {
    number: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FulfillmentOrder {
    id: String,
    supported_actions: Vec<Action>,
    assigned_location: AssignedLocation,
    line_items: Connection<FoLine>,
}

#[derive(Deserialize, Debug)]
struct Action {
    action: String,
}

#[derive(Deserialize, Debug)]
struct AssignedLocation {
    location: Option<Node>,
}

#[derive(Deserialize, Debug)]
struct Node {
    id: String,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct FoLine {
    id: String,
    remaining_quantity: i64,
    line_item: Node,
}

/// Reports the shipment, once.
pub(super) async fn notify(client: &Client, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
    let order = &notice.external_order_id;
    if order.is_empty() || !order.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused(format!("The order's external_id {order:?} is not a Shopify order number.")));
    }
    let gid = format!("gid://shopify/Order/{order}");
    // The look reads the state the allocation then uses.
    let seen: &Mutex<Option<State>> = &Mutex::new(None);
    let gid = gid.as_str();
    let look = || async move {
        let state = read_state(client, gid).await?;
        if already_there(&state, &notice.tracking_number) {
            return Ok(Some(()));
        }
        if state.cancelled {
            return Err(refused(format!("Shopify's order {order} was canceled; it takes no fulfillment.")));
        }
        *seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(state);
        Ok(None)
    };
    let make = || async move {
        let state = seen.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default();
        let fulfillment = allocate(&state, notice, client.notify_customer)?;
        create(client, fulfillment).await
    };
    match client.shop.api.create(look, make).await? {
        Created::AlreadyThere(()) => Ok(Notified::AlreadyThere),
        Created::Now(()) => Ok(Notified::Posted),
    }
}

fn refused(message: String) -> PlatformError {
    PlatformError::Rejected { status: 0, message }
}

/// The order's fulfillments and every fulfillment order with all its lines.
async fn read_state(client: &Client, gid: &str) -> Result<State, PlatformError> {
    #[derive(Deserialize)]
    struct Data {
        order: Option<OrderState>,
    }
    let mut state = State::default();
    let mut after: Option<String> = None;
    for page in 0..MAX_PAGES {
        let data: Data = client.shop.query(&FULFILLMENT_STATE, json!({"id": gid, "after": after})).await?;
        let Some(order) = data.order else {
            return Err(refused(format!("Shopify has no order {}.", gid.rsplit('/').next().unwrap_or(gid))));
        };
        if page == 0 {
            state.cancelled = order.cancelled_at.is_some();
            state.fulfillments = order.fulfillments;
        }
        for mut fo in order.fulfillment_orders.nodes {
            more_lines(client, &mut fo).await?;
            state.fulfillment_orders.push(fo);
        }
        let info = order.fulfillment_orders.page_info;
        if !info.has_next_page {
            return Ok(state);
        }
        after = info.end_cursor;
    }
    Err(refused(format!("Shopify's order {gid} has more fulfillment orders than orderbridge reads.")))
}

/// Reads the lines of a fulfillment order past its first page.
async fn more_lines(client: &Client, fo: &mut FulfillmentOrder) -> Result<(), PlatformError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Data {
        fulfillment_order: Option<Lines>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Lines {
        line_items: Connection<FoLine>,
    }
    for _ in 0..MAX_PAGES {
        if !fo.line_items.page_info.has_next_page {
            return Ok(());
        }
        let after = fo.line_items.page_info.end_cursor.clone();
        let data: Data =
            client.shop.query(&FULFILLMENT_ORDER_LINE_ITEMS, json!({"id": fo.id, "after": after})).await?;
        let more = data
            .fulfillment_order
            .ok_or_else(|| refused(format!("Shopify no longer has the fulfillment order {}.", fo.id)))?
            .line_items;
        fo.line_items.nodes.extend(more.nodes);
        fo.line_items.page_info = more.page_info;
    }
    Err(refused(format!("The fulfillment order {} has more lines than orderbridge reads.", fo.id)))
}

/// Whether a live fulfillment of the order carries this tracking number.
fn already_there(state: &State, tracking: &str) -> bool {
    state.fulfillments.iter().any(|f| {
        !matches!(f.status.as_str(), "CANCELLED" | "ERROR" | "FAILURE")
            && f.tracking_info.iter().any(|t| t.number.as_deref() == Some(tracking))
    })
}

/// The `FulfillmentInput` of the shipment: its units taken from the candidate
/// fulfillment-order lines in Shopify's order, all at one location.
fn allocate(state: &State, notice: &ShipmentNotice, notify_customer: bool) -> Result<Value, PlatformError> {
    let order = &notice.external_order_id;
    let candidates: Vec<&FulfillmentOrder> = state
        .fulfillment_orders
        .iter()
        .filter(|fo| fo.supported_actions.iter().any(|a| a.action == "CREATE_FULFILLMENT"))
        .collect();
    // (fulfillment order index, its line id, units), in the order taken.
    let mut taken: Vec<(usize, &str, i64)> = Vec::new();
    let mut left: HashMap<&str, i64> = HashMap::new();
    if notice.items.is_empty() {
        for (i, fo) in candidates.iter().enumerate() {
            for line in fo.line_items.nodes.iter().filter(|l| l.remaining_quantity > 0) {
                taken.push((i, &line.id, line.remaining_quantity));
            }
        }
    }
    for item in &notice.items {
        let Some(line) = item.line.as_deref() else {
            return Err(refused(format!(
                "A line of order {order} has no external_order_item_id, so Shopify cannot be told which line shipped."
            )));
        };
        let gid = format!("gid://shopify/LineItem/{line}");
        let mut wanted = item.quantity;
        for (i, fo) in candidates.iter().enumerate() {
            for fo_line in fo.line_items.nodes.iter().filter(|l| l.line_item.id == gid) {
                if wanted == 0 {
                    break;
                }
                let remaining = left.entry(&fo_line.id).or_insert(fo_line.remaining_quantity);
                let take = wanted.min(*remaining);
                if take > 0 {
                    *remaining -= take;
                    wanted -= take;
                    match taken.iter_mut().find(|(_, id, _)| *id == fo_line.id) {
                        Some(entry) => entry.2 += take,
                        None => taken.push((i, &fo_line.id, take)),
                    }
                }
            }
        }
        if wanted > 0 {
            return Err(refused(format!(
                "Shopify's order {order} has {} of {} units of line {line} left to fulfil; the shipment has {}.",
                item.quantity - wanted,
                item.quantity,
                item.quantity
            )));
        }
    }
    if taken.is_empty() {
        return Err(refused(format!("Shopify's order {order} has nothing left to fulfil.")));
    }
    let mut locations: Vec<Option<&str>> = Vec::new();
    let mut groups: Vec<(usize, Vec<Value>)> = Vec::new();
    for (i, line, units) in &taken {
        let location = candidates[*i].assigned_location.location.as_ref().map(|l| l.id.as_str());
        if !locations.contains(&location) {
            locations.push(location);
        }
        let entry = json!({"id": line, "quantity": units});
        match groups.iter_mut().find(|(fo, _)| fo == i) {
            Some((_, lines)) => lines.push(entry),
            None => groups.push((*i, vec![entry])),
        }
    }
    if locations.len() > 1 {
        return Err(refused(format!(
            "The shipment's items of order {order} are assigned to {} Shopify locations, and one fulfillment takes one location; ship them as one shipment per location.",
            locations.len()
        )));
    }
    if groups.len() > MAX_INPUT_ITEMS || groups.iter().any(|(_, lines)| lines.len() > MAX_INPUT_ITEMS) {
        return Err(refused(format!(
            "The shipment of order {order} spans more than {MAX_INPUT_ITEMS} fulfillment-order lines, Shopify's limit for one request."
        )));
    }
    let by_fulfillment_order: Vec<Value> = groups
        .into_iter()
        .map(|(i, lines)| json!({"fulfillmentOrderId": candidates[i].id, "fulfillmentOrderLineItems": lines}))
        .collect();
    let mut tracking = json!({"number": notice.tracking_number});
    if let Some(carrier) = notice.carrier.as_deref().filter(|c| !c.trim().is_empty()) {
        tracking["company"] = Value::from(carrier);
    }
    Ok(json!({
        "notifyCustomer": notify_customer,
        "trackingInfo": tracking,
        "lineItemsByFulfillmentOrder": by_fulfillment_order,
    }))
}

/// Sends the fulfillment once. `userErrors` refuse this shipment, with Shopify's messages.
async fn create(client: &Client, fulfillment: Value) -> Result<(), PlatformError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Data {
        fulfillment_create: Option<Payload>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Payload {
        fulfillment: Option<Value>,
        user_errors: Vec<UserError>,
    }
    #[derive(Deserialize)]
    struct UserError {
        message: String,
    }
    let data: Data = client.shop.query(&FULFILLMENT_CREATE, json!({"fulfillment": fulfillment})).await?;
    let payload = data
        .fulfillment_create
        .ok_or_else(|| PlatformError::BadData("Shopify answered fulfillmentCreate with nothing.".into()))?;
    if !payload.user_errors.is_empty() {
        let messages: Vec<String> =
            payload.user_errors.iter().map(|e| client.shop.quote(&e.message)).collect();
        return Err(refused(format!("Shopify refused the fulfillment: {}", messages.join("; "))));
    }
    if payload.fulfillment.is_none() {
        return Err(PlatformError::BadData("Shopify's fulfillmentCreate made no fulfillment.".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::store::NoticeItem;

    fn fo(id: &str, location: &str, lines: &[(&str, &str, i64)], create: bool) -> FulfillmentOrder {
        let actions = if create { vec!["CREATE_FULFILLMENT", "HOLD"] } else { vec!["HOLD"] };
        serde_json::from_value(json!({
            "id": id,
            "supportedActions": actions.iter().map(|a| json!({"action": a})).collect::<Vec<_>>(),
            "assignedLocation": {"location": {"id": location}},
            "lineItems": {"nodes": lines.iter().map(|(id, line, n)| json!({"id": id, "remainingQuantity": n,
                                                                            "lineItem": {"id": format!("gid://shopify/LineItem/{line}")}}))
                                       .collect::<Vec<_>>(),
                          "pageInfo": {"hasNextPage": false, "endCursor": null}}
        }))
        .unwrap()
    }

    fn notice(items: &[(&str, i64)], carrier: Option<&str>) -> ShipmentNotice {
        let items = items.iter().map(|(line, q)| NoticeItem {
            line: Some(line.to_string()),
            sku: None,
            quantity: *q,
        });
        ShipmentNotice {
            carrier: carrier.map(str::to_string),
            ..ShipmentNotice::new("1001", "1Z999", items.collect())
        }
    }

    #[test]
    fn the_annex_example_takes_the_open_line_and_names_the_carrier() {
        let state = State {
            cancelled: false,
            fulfillments: serde_json::from_value(json!([
                {"status": "CANCELLED", "trackingInfo": [{"number": "1Z999"}]}
            ]))
            .unwrap(),
            fulfillment_orders: vec![fo("FO1", "L1", &[("FOL1", "13857458094115", 2)], true)],
        };
        assert!(!already_there(&state, "1Z999"), "a cancelled fulfillment does not count");
        let input = allocate(&state, &notice(&[("13857458094115", 2)], Some("UPS")), true).unwrap();
        assert_eq!(
            input,
            json!({"notifyCustomer": true, "trackingInfo": {"number": "1Z999", "company": "UPS"},
                   "lineItemsByFulfillmentOrder": [{"fulfillmentOrderId": "FO1",
                       "fulfillmentOrderLineItems": [{"id": "FOL1", "quantity": 2}]}]})
        );
        let input = allocate(&state, &notice(&[("13857458094115", 1)], None), false).unwrap();
        assert_eq!(input["trackingInfo"], json!({"number": "1Z999"}), "no carrier, no company");
        assert_eq!(input["notifyCustomer"], false);
    }

    #[test]
    fn units_come_from_lines_in_shopify_order_and_never_past_what_is_left() {
        let state = State {
            fulfillment_orders: vec![
                fo("FO0", "L1", &[("X", "7", 5)], false),
                fo("FO1", "L1", &[("A", "7", 1), ("B", "8", 3)], true),
                fo("FO2", "L1", &[("C", "7", 2)], true),
            ],
            ..State::default()
        };
        let input = allocate(&state, &notice(&[("7", 3), ("8", 1)], None), true).unwrap();
        assert_eq!(
            input["lineItemsByFulfillmentOrder"],
            json!([{"fulfillmentOrderId": "FO1", "fulfillmentOrderLineItems": [{"id": "A", "quantity": 1}, {"id": "B", "quantity": 1}]},
                   {"fulfillmentOrderId": "FO2", "fulfillmentOrderLineItems": [{"id": "C", "quantity": 2}]}])
        );
        let everything = allocate(&state, &notice(&[], None), true).unwrap();
        assert_eq!(everything["lineItemsByFulfillmentOrder"].as_array().unwrap().len(), 2);
        type Case<'a> = (&'a [(&'a str, i64)], State, &'a str);
        let cases: [Case; 3] = [
            (
                &[("7", 4)],
                State {
                    fulfillment_orders: vec![fo("FO1", "L1", &[("A", "7", 3)], true)],
                    ..State::default()
                },
                "left to fulfil",
            ),
            (
                &[("9", 1)],
                State {
                    fulfillment_orders: vec![fo("FO1", "L1", &[("A", "7", 3)], true)],
                    ..State::default()
                },
                "left to fulfil",
            ),
            (
                &[("7", 1), ("8", 1)],
                State {
                    fulfillment_orders: vec![
                        fo("FO1", "L1", &[("A", "7", 1)], true),
                        fo("FO2", "L2", &[("B", "8", 1)], true),
                    ],
                    ..State::default()
                },
                "2 Shopify locations",
            ),
        ];
        for (items, state, why) in cases {
            let e = allocate(&state, &notice(items, None), true).unwrap_err();
            assert!(
                matches!(e, PlatformError::Rejected { .. }) && e.message().contains(why),
                "{items:?}: {e}"
            );
        }
        let e = allocate(&State::default(), &notice(&[], None), true).unwrap_err();
        assert!(e.message().contains("nothing left"), "{e}");
    }
}
