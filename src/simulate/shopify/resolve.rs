//! Running an operation over the simulated shop: the query and mutation roots and their
//! resolvers, as Shopify answers the fields orderbridge's documents ask for.

use super::data::{ShopData, gid_number, parse_search, search_date};
use super::graphql::{Conn, Fields, Obj, Prepared, json_args};
use apollo_compiler::resolvers::{Execution, FieldError, ObjectValue, ResolveInfo, ResolvedValue};
use serde_json::{Map, Value, json};
use std::cell::RefCell;

use super::*;

/// Runs the operation over the shop; returns `data` and any field errors.
pub(super) fn execute(
    shop: &mut Shop,
    prepared: &Prepared,
    variables: &Map<String, Value>,
    key: Option<String>,
    scopes: &[String],
) -> (Option<Value>, Vec<Value>) {
    let raw = apollo_compiler::response::JsonValue::from(Value::Object(variables.clone()));
    let empty = apollo_compiler::response::JsonMap::new();
    let raw = raw.as_object().unwrap_or(&empty);
    let op = prepared.operation();
    let execution =
        Execution::new(graphql::schema(), &prepared.document).operation(op).raw_variable_values(raw);
    let now = now_ms();
    let result = if op.is_mutation() {
        let root = MutationRoot { data: RefCell::new(&mut shop.data), key, now };
        execution.execute_sync(&root)
    } else {
        let root = QueryRoot { data: &shop.data, scopes };
        execution.execute_sync(&root)
    };
    match result {
        Ok(response) => {
            let errors =
                response.errors.iter().map(|e| serde_json::to_value(e).unwrap_or(Value::Null)).collect();
            let data = response.data.map(|d| serde_json::to_value(d).unwrap_or(Value::Null));
            (data, errors)
        }
        Err(e) => (
            None,
            vec![serde_json::to_value(e.to_graphql_error(&prepared.document.sources)).unwrap_or(Value::Null)],
        ),
    }
}

struct QueryRoot<'s> {
    data: &'s ShopData,
    /// The scopes of the token asking, which `currentAppInstallation` shows.
    scopes: &'s [String],
}

fn field_error(message: impl Into<String>) -> FieldError {
    FieldError { message: message.into() }
}

impl ObjectValue for QueryRoot<'_> {
    fn type_name(&self) -> &str {
        "QueryRoot"
    }

    fn resolve_field<'a>(&'a self, info: &'a ResolveInfo<'a>) -> Result<ResolvedValue<'a>, FieldError> {
        let args = json_args(info.arguments());
        let id_arg = |kind: &str| args.get("id").and_then(Value::as_str).and_then(|g| gid_number(kind, g));
        let data = self.data;
        match info.field_name() {
            "shop" => Ok(ResolvedValue::object(Obj::owned(
                "Shop",
                graphql::owned_map(
                    json!({"id": "gid://shopify/Shop/1", "name": data.name, "myshopifyDomain": data.domain,
                                          "currencyCode": data.currency, "weightUnit": data.weight_unit}),
                ),
            ))),
            "currentAppInstallation" => Ok(ResolvedValue::object(Obj::owned(
                "AppInstallation",
                graphql::owned_map(json!({"id": "gid://shopify/AppInstallation/1",
                    "accessScopes": self.scopes.iter().map(|s| json!({"handle": s, "description": s})).collect::<Vec<_>>()})),
            ))),
            "order" => Ok(ResolvedValue::nullable_object(
                id_arg("Order")
                    .and_then(|id| data.orders.get(&id))
                    .map(|o| Obj::owned("Order", data.order_json(o))),
            )),
            "fulfillmentOrder" => Ok(ResolvedValue::nullable_object(
                id_arg("FulfillmentOrder")
                    .and_then(|id| data.fulfillment_order_by_id(id))
                    .map(|m| Obj::owned("FulfillmentOrder", m)),
            )),
            "location" => {
                let id = match args.get("id").and_then(Value::as_str) {
                    None => None,
                    Some(g) => Some(gid_number("Location", g).ok_or_else(|| field_error("Invalid id"))?),
                };
                Ok(ResolvedValue::nullable_object(data.location_by_id(id).map(|m| Obj::owned("Location", m))))
            }
            "orders" => orders(data, &args),
            "inventoryItems" => inventory_items(data, &args),
            _ => Err(self.unknown_field_error(info)),
        }
    }
}

/// The `orders` connection: the query's filter, the sort key, keyset cursors.
fn orders<'a>(data: &'a ShopData, args: &Map<String, Value>) -> Result<ResolvedValue<'a>, FieldError> {
    let first = args.get("first").and_then(Value::as_i64);
    let Some(first) = first.filter(|n| (0..=graphql::MAX_PAGE).contains(n)) else {
        return Err(field_error("The simulator pages orders with first (0 to 250) only."));
    };
    if args.get("last").is_some_and(|v| !v.is_null()) || args.get("before").is_some_and(|v| !v.is_null()) {
        return Err(field_error("The simulator pages orders forward only (first and after)."));
    }
    let reverse = args.get("reverse").and_then(Value::as_bool).unwrap_or(false);
    let sort = args.get("sortKey").and_then(Value::as_str).unwrap_or("PROCESSED_AT");
    let key = |o: &data::Order| match sort {
        "UPDATED_AT" => Ok(o.updated_ms),
        "PROCESSED_AT" | "CREATED_AT" => Ok(o.processed_ms),
        "ID" => Ok(o.id),
        other => Err(field_error(format!("The simulator does not sort orders by {other}."))),
    };
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let alternatives = parse_search(query).map_err(field_error)?;
    let mut filters = Vec::new();
    for terms in &alternatives {
        let mut all = Vec::new();
        for term in terms {
            all.push(order_filter(term)?);
        }
        filters.push(all);
    }
    let matches = |o: &data::Order| filters.is_empty() || filters.iter().any(|all| all.iter().all(|f| f(o)));
    let after = match args.get("after").and_then(Value::as_str) {
        None => None,
        Some(text) => {
            let cursor =
                graphql::decode_cursor(text).ok_or_else(|| field_error("Invalid cursor for `after`."))?;
            let at = |k: &str| cursor.get(k).and_then(Value::as_i64);
            Some(
                at("last_value")
                    .zip(at("last_id"))
                    .ok_or_else(|| field_error("Invalid cursor for `after`."))?,
            )
        }
    };
    // (sort value, id) of every order, ascending (or descending with `reverse`).
    let ordered: Box<dyn Iterator<Item = (i64, i64)>> = if sort == "UPDATED_AT" && !reverse {
        let from = after.unwrap_or((i64::MIN, i64::MIN));
        Box::new(data.by_updated.range(from..).copied().filter(move |k| Some(*k) != after))
    } else {
        let mut all: Vec<(i64, i64)> = Vec::with_capacity(data.orders.len());
        for o in data.orders.values() {
            all.push((key(o)?, o.id));
        }
        all.sort_unstable();
        if reverse {
            all.reverse();
        }
        let past = move |k: &(i64, i64)| match after {
            None => true,
            Some(a) if reverse => *k < a,
            Some(a) => *k > a,
        };
        Box::new(all.into_iter().filter(past))
    };
    let mut page = Vec::new();
    let mut has_next = false;
    for (value, id) in ordered {
        let Some(order) = data.orders.get(&id) else { continue };
        if !matches(order) {
            continue;
        }
        if page.len() as i64 == first {
            has_next = true;
            break;
        }
        let cursor = graphql::encode_cursor(&json!({"last_id": id, "last_value": value}));
        page.push((cursor, Fields::Owned(data.order_json(order))));
    }
    Ok(ResolvedValue::object(Conn {
        ty: "OrderConnection",
        node_ty: "Order",
        nodes: page,
        has_next,
        has_previous: after.is_some(),
    }))
}

type OrderFilter = Box<dyn Fn(&data::Order) -> bool>;

/// One search term over orders: `status`, or a date field with a comparator.
fn order_filter(term: &data::Term) -> Result<OrderFilter, FieldError> {
    match term.field.as_str() {
        "status" => {
            let status = term.value.to_ascii_lowercase();
            let filter: OrderFilter = match status.as_str() {
                "open" => Box::new(|o| !o.closed && o.cancelled_ms.is_none()),
                "closed" => Box::new(|o| o.closed),
                "cancelled" => Box::new(|o| o.cancelled_ms.is_some()),
                "not_closed" => Box::new(|o| !o.closed),
                "any" => Box::new(|_| true),
                other => return Err(field_error(format!("Invalid status value {other:?}."))),
            };
            Ok(filter)
        }
        "updated_at" | "created_at" | "processed_at" => {
            let at = search_date(&term.value).ok_or_else(|| {
                field_error(format!(
                    "The {} value {:?} is not a date the search syntax reads (quote it).",
                    term.field, term.value
                ))
            })?;
            let updated = term.field == "updated_at";
            let value = move |o: &data::Order| if updated { o.updated_ms } else { o.processed_ms };
            let filter: OrderFilter = match term.comparator.as_str() {
                ">=" => Box::new(move |o| value(o) >= at),
                ">" => Box::new(move |o| value(o) > at),
                "<=" => Box::new(move |o| value(o) <= at),
                "<" => Box::new(move |o| value(o) < at),
                "" | "=" => Box::new(move |o| value(o) / 1000 == at / 1000),
                other => return Err(field_error(format!("Invalid comparator {other:?}."))),
            };
            Ok(filter)
        }
        other => Err(field_error(format!("The simulator does not search orders by {other}."))),
    }
}

/// The `inventoryItems` connection: `sku:` terms, which (like Shopify's search) match more
/// than the exact SKU: every SKU that starts with the value.
fn inventory_items<'a>(
    data: &'a ShopData,
    args: &Map<String, Value>,
) -> Result<ResolvedValue<'a>, FieldError> {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let alternatives = parse_search(query).map_err(field_error)?;
    for term in alternatives.iter().flatten() {
        if term.field != "sku" {
            return Err(field_error(format!(
                "The simulator does not search inventory items by {}.",
                term.field
            )));
        }
    }
    let found: Vec<&data::Item> = data
        .items
        .values()
        .filter(|item| {
            alternatives.is_empty()
                || alternatives.iter().any(|all| all.iter().all(|t| item.sku.starts_with(t.value.as_str())))
        })
        .collect();
    let page = graphql::paginate(found.len(), args)?;
    let nodes =
        page.range.map(|i| (graphql::index_cursor(i), Fields::Owned(data.item_json(found[i])))).collect();
    Ok(ResolvedValue::object(Conn {
        ty: "InventoryItemConnection",
        node_ty: "InventoryItem",
        nodes,
        has_next: page.has_next,
        has_previous: page.has_previous,
    }))
}

struct MutationRoot<'s> {
    data: RefCell<&'s mut ShopData>,
    key: Option<String>,
    now: i64,
}

impl ObjectValue for MutationRoot<'_> {
    fn type_name(&self) -> &str {
        "Mutation"
    }

    fn resolve_field<'a>(&'a self, info: &'a ResolveInfo<'a>) -> Result<ResolvedValue<'a>, FieldError> {
        let args = json_args(info.arguments());
        let mut data = self.data.borrow_mut();
        match info.field_name() {
            "fulfillmentCreate" => {
                let input = args.get("fulfillment").cloned().unwrap_or(Value::Null);
                let payload = data.fulfillment_create(&input, self.now);
                let made = payload["fulfillment"]["id"].as_str().and_then(|g| gid_number("Fulfillment", g));
                if let Some(made) = made {
                    let order = data.orders.values().find(|o| o.fulfillments.iter().any(|f| f.id == made));
                    let name = order.map_or_else(|| "?".to_string(), |o| format!("#{}", o.number));
                    let number = input["trackingInfo"]["number"].as_str().unwrap_or("(none)");
                    let company = input["trackingInfo"]["company"].as_str().unwrap_or("no carrier");
                    let notified = if input["notifyCustomer"].as_bool().unwrap_or(false) {
                        "the customer is emailed"
                    } else {
                        "the customer is not emailed"
                    };
                    crate::logging::notice(format_args!(
                        "simulated Shopify {}: order {name} fulfilled, tracking {number} ({company}); {notified}",
                        data.domain
                    ));
                }
                Ok(ResolvedValue::object(Obj::owned("FulfillmentCreatePayload", graphql::owned_map(payload))))
            }
            "inventorySetQuantities" => {
                let key =
                    self.key.clone().ok_or_else(|| field_error("The @idempotent directive is required."))?;
                let input = args.get("input").cloned().unwrap_or(Value::Null);
                let payload = data.set_quantities(&input, &key, self.now);
                if payload["userErrors"].as_array().is_some_and(Vec::is_empty) {
                    let shown: Vec<String> = input["quantities"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .take(8)
                        .map(|q| {
                            let item =
                                q["inventoryItemId"].as_str().and_then(|g| gid_number("InventoryItem", g));
                            let sku = item.and_then(|id| data.items.get(&id)).map_or("?", |i| i.sku.as_str());
                            format!("{sku}={}", q["quantity"].as_i64().unwrap_or_default())
                        })
                        .collect();
                    let count = input["quantities"].as_array().map_or(0, Vec::len);
                    let more = if count > shown.len() {
                        format!(" and {} more", count - shown.len())
                    } else {
                        String::new()
                    };
                    crate::logging::notice(format_args!(
                        "simulated Shopify {}: available stock set for {count} items: {}{more}",
                        data.domain,
                        shown.join(", ")
                    ));
                }
                Ok(ResolvedValue::object(Obj::owned(
                    "InventorySetQuantitiesPayload",
                    graphql::owned_map(payload),
                )))
            }
            _ => Err(self.unknown_field_error(info)),
        }
    }
}
