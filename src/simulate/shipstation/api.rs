//! The wire: which operation a request is, whether the account takes it (key, faults, the
//! limit of 200 a minute), the request's shape, and the seven operations' answers in the
//! file's shapes (`error_response_body` for errors, a 500 with no body).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Account, Fault, Label, Operation, Shipment, ShipmentStatus, State, Stock};
use crate::dates::format_ms;
use crate::simulate::http::{Request, Response};
use crate::simulate::running::lock;

/// The operation a request names, with the id in its path.
fn operation(request: &Request) -> Option<(Operation, Option<&str>)> {
    let rest = request.path.strip_prefix("/v2/")?;
    Some(match (request.method.as_str(), rest) {
        ("GET", "warehouses") => (Operation::ListWarehouses, None),
        ("POST", "shipments") => (Operation::CreateShipments, None),
        ("GET", "labels") => (Operation::ListLabels, None),
        ("GET", "inventory") => (Operation::GetInventoryLevels, None),
        ("GET", rest) if rest.starts_with("warehouses/") => {
            (Operation::GetWarehouse, Some(rest.strip_prefix("warehouses/").filter(|id| !id.contains('/'))?))
        }
        ("GET", rest) if rest.starts_with("shipments/external_shipment_id/") => (
            Operation::GetShipmentByExternalId,
            Some(rest.strip_prefix("shipments/external_shipment_id/").filter(|id| !id.contains('/'))?),
        ),
        ("PUT", rest) => (
            Operation::CancelShipment,
            Some(rest.strip_prefix("shipments/")?.strip_suffix("/cancel").filter(|id| !id.contains('/'))?),
        ),
        _ => return None,
    })
}

/// The file's `error_response_body`.
pub(super) fn error(status: u16, error_type: &str, error_code: &str, message: &str) -> Response {
    Response::json(
        status,
        &json!({"request_id": "5b4a6e1c-0c8a-4bd4-9a4e-000000000000",
                "errors": [{"error_source": "ShipStation", "error_type": error_type, "error_code": error_code,
                            "message": message}]}),
    )
}

pub(super) async fn answer(state: Arc<Mutex<State>>, request: Request) -> Response {
    let mut state = lock(&state);
    let mut response = admit_and_route(&mut state, &request);
    response.headers.push(("Date".into(), httpdate::fmt_http_date(std::time::SystemTime::now())));
    #[cfg(test)]
    if state.recording {
        state.exchanges.push(crate::simulate::openapi_check::Exchange::between(&request, &response));
    }
    response
}

fn admit_and_route(state: &mut State, request: &Request) -> Response {
    let Some((op, id)) = operation(request) else {
        return error(404, "validation", "invalid_identifier", "No such resource.");
    };
    *state.counts.entry(op).or_default() += 1;
    let now = Instant::now();
    let now_ms = super::now_ms();
    state.advance(now_ms);
    let key = request.header("api-key").unwrap_or_default().to_string();
    let label_after = state.label_after;
    let Some(account) = state.accounts.get_mut(&key).filter(|a| !a.revoked) else {
        return error(401, "security", "unauthorized", "The API key is invalid.");
    };
    match account.faults.take(|k| k.is_empty() || k == op.as_str()) {
        Some(Fault::RateLimited(secs)) => return too_many(secs),
        // The file's `ServerError`: an empty `text/plain` body.
        Some(Fault::Status(500)) => {
            let mut failed = Response::empty(500);
            failed.headers.push(("Content-Type".into(), "text/plain".into()));
            return failed;
        }
        Some(Fault::Status(status)) => return Response::empty(status),
        Some(Fault::NotJson) => {
            return Response {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: b"<html><body>Service temporarily rerouted</body></html>".to_vec(),
            };
        }
        None => {}
    }
    while account.window.front().is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60)) {
        account.window.pop_front();
    }
    if account.window.len() >= account.per_minute {
        let oldest = account.window.front().copied().unwrap_or(now);
        let wait = Duration::from_secs(60).saturating_sub(now.duration_since(oldest));
        return too_many((wait.as_secs_f64().ceil() as u64).max(1));
    }
    account.window.push_back(now);
    if let Err(why) = shape(op, request) {
        return error(400, "validation", "invalid_field_value", &why);
    }
    match op {
        Operation::ListWarehouses => {
            Response::json(200, &json!({"warehouses": [warehouse(&account.warehouse_id)]}))
        }
        Operation::GetWarehouse if id == Some(account.warehouse_id.as_str()) => {
            Response::json(200, &warehouse(&account.warehouse_id))
        }
        Operation::GetWarehouse => error(404, "validation", "invalid_identifier", "warehouse not found"),
        Operation::CreateShipments => {
            let ids = (state.next_id, label_after);
            let account = state.accounts.get_mut(&key).expect("the account");
            let (response, used) = create(account, request, ids, now_ms);
            state.next_id += used;
            response
        }
        Operation::GetShipmentByExternalId => {
            match account.shipments.iter().find(|s| s.external.as_deref() == id) {
                Some(shipment) => Response::json(200, &shipment_view(shipment, &account.warehouse_id)),
                None => error(404, "validation", "invalid_identifier", "shipment not found"),
            }
        }
        Operation::CancelShipment => cancel(account, id.unwrap_or_default(), now_ms),
        Operation::ListLabels => labels(account, request),
        Operation::GetInventoryLevels => inventory(account, request),
    }
}

fn too_many(secs: u64) -> Response {
    let mut response = error(429, "system", "rate_limit_exceeded", "You have exceeded the rate limit.");
    response.headers.push(("Retry-After".into(), secs.to_string()));
    response
}

/// What ShipStation refuses before an operation runs: the headers and the body's form.
fn shape(op: Operation, request: &Request) -> Result<(), String> {
    if op == Operation::CreateShipments {
        if !request.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
            return Err("Content-Type must be application/json".into());
        }
        let body: Value =
            serde_json::from_slice(&request.body).map_err(|e| format!("the body is not JSON: {e}"))?;
        let shipments = body
            .get("shipments")
            .and_then(Value::as_array)
            .filter(|s| !s.is_empty())
            .ok_or("shipments must be a non-empty array")?;
        if body.as_object().is_some_and(|o| o.len() != 1) {
            return Err("the body has properties other than shipments".into());
        }
        for (at, shipment) in shipments.iter().enumerate() {
            create_shape(shipment).map_err(|why| format!("shipments[{at}]: {why}"))?;
        }
    } else if !request.body.is_empty() {
        return Err("this operation takes no body".into());
    }
    Ok(())
}

/// The closed `create_shipment_request`, as far as orderbridge fills it.
fn create_shape(shipment: &Value) -> Result<(), String> {
    const KNOWN: [&str; 19] = [
        "validate_address",
        "external_shipment_id",
        "carrier_id",
        "create_sales_order",
        "store_id",
        "notes_from_buyer",
        "notes_for_gift",
        "is_gift",
        "zone",
        "display_scheme",
        "assigned_user",
        "shipment_status",
        "amount_paid",
        "shipping_paid",
        "tax_paid",
        "ship_to",
        "ship_from",
        "items",
        "packages",
    ];
    let object = shipment.as_object().ok_or("not an object")?;
    if let Some(other) = object.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!("{other} is not a property of create_shipment_request"));
    }
    match object.get("external_shipment_id") {
        Some(Value::String(s)) if s.chars().count() <= 50 => {}
        None => {}
        _ => return Err("external_shipment_id must be a string of at most 50 characters".into()),
    }
    let to = object.get("ship_to").and_then(Value::as_object).ok_or("ship_to is required")?;
    for field in
        ["name", "phone", "address_line1", "city_locality", "state_province", "postal_code", "country_code"]
    {
        if to.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!("ship_to.{field} is required"));
        }
    }
    for (at, item) in object.get("items").and_then(Value::as_array).into_iter().flatten().enumerate() {
        if let Some(weight) = item.get("weight") {
            let positive = weight.get("value").and_then(Value::as_f64).is_some_and(|v| v > 0.0);
            let unit = weight.get("unit").and_then(Value::as_str);
            if !positive || !matches!(unit, Some("pound" | "ounce" | "gram" | "kilogram")) {
                return Err(format!("items[{at}].weight must have a positive value and a unit"));
            }
        }
    }
    Ok(())
}

fn address(name: &str) -> Value {
    json!({"name": name, "phone": "+1 512 555 0199", "company_name": "Orderbridge Test Dock",
           "address_line1": "500 Warehouse Way", "city_locality": "Austin", "state_province": "TX",
           "postal_code": "78744", "country_code": "US", "address_residential_indicator": "no"})
}

fn warehouse(id: &str) -> Value {
    json!({"warehouse_id": id, "is_default": true, "name": "Main dock", "created_at": "2026-01-05T09:00:00.000Z",
           "origin_address": address("Main dock"), "return_address": address("Returns")})
}

/// A shipment as the file's `shipment` has it.
fn shipment_view(s: &Shipment, warehouse_id: &str) -> Value {
    let mut view = Map::new();
    view.insert("shipment_id".into(), json!(s.id));
    if let Some(external) = &s.external {
        view.insert("external_shipment_id".into(), json!(external));
    }
    let ounces: f64 = s
        .sent
        .get("items")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(|i| i.pointer("/weight/value").and_then(Value::as_f64)).sum())
        .unwrap_or_default();
    let from = s.sent.get("ship_from").cloned().unwrap_or_else(|| address("Main dock"));
    let to = s.sent.get("ship_to").cloned().unwrap_or_else(|| address("Pat Foreign"));
    view.insert("warehouse_id".into(), json!(warehouse_id));
    view.insert("created_at".into(), json!(format_ms(s.created_ms)));
    view.insert("modified_at".into(), json!(format_ms(s.modified_ms)));
    view.insert("shipment_status".into(), json!(s.status.as_str()));
    view.insert("ship_to".into(), to);
    view.insert("ship_from".into(), from.clone());
    view.insert("return_to".into(), from);
    view.insert("confirmation".into(), json!("none"));
    view.insert("advanced_options".into(), json!({}));
    view.insert("insurance_provider".into(), json!("none"));
    view.insert("tags".into(), json!([]));
    view.insert("packages".into(), json!([{"weight": {"value": ounces.max(1.0), "unit": "pound"}}]));
    view.insert("total_weight".into(), json!({"value": ounces.max(1.0), "unit": "pound"}));
    if let Some(items) = s.sent.get("items") {
        view.insert("items".into(), items.clone());
    }
    Value::Object(view)
}

/// `POST /v2/shipments`: each object a new shipment, or refused in its entry. The answer and
/// the ids used.
fn create(
    account: &mut Account,
    request: &Request,
    (first_id, label_after): (u64, Option<Duration>),
    now: i64,
) -> (Response, u64) {
    if account.refused_batches > 0 {
        account.refused_batches -= 1;
        return (error(400, "validation", "invalid_field_value", "The request is invalid."), 0);
    }
    let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
    let mut used = 0;
    let mut entries = Vec::new();
    let mut has_errors = false;
    for object in body["shipments"].as_array().into_iter().flatten() {
        used += 1;
        let id = format!("se-{}", first_id + used);
        let external = object.get("external_shipment_id").and_then(Value::as_str).map(str::to_string);
        let refusal = match &external {
            Some(e) if account.shipments.iter().any(|s| s.external.as_ref() == Some(e)) => {
                Some(format!("external_shipment_id {e} already exists"))
            }
            Some(e) => account.refusals.get(e).cloned(),
            None => None,
        };
        let shipment = Shipment {
            id,
            external,
            status: ShipmentStatus::Pending,
            created_ms: now,
            modified_ms: now,
            label_due: label_after.map(|d| now + i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)),
            sent: object.clone(),
        };
        let mut entry = shipment_view(&shipment, &account.warehouse_id);
        match refusal {
            Some(why) => {
                has_errors = true;
                entry["errors"] = json!([why]);
            }
            None => account.shipments.push(shipment),
        }
        entries.push(entry);
    }
    if account.lost_creates > 0 {
        account.lost_creates -= 1;
        return (Response::empty(502), used);
    }
    (Response::json(200, &json!({"has_errors": has_errors, "shipments": entries})), used)
}

/// `PUT /v2/shipments/{id}/cancel`: 204 while no label holds it.
fn cancel(account: &mut Account, id: &str, now: i64) -> Response {
    let labelled = account.labels.iter().any(|l| l.shipment_id == id && l.voided_ms.is_none());
    let Some(shipment) = account.shipments.iter_mut().find(|s| s.id == id) else {
        return error(404, "validation", "invalid_identifier", "shipment not found");
    };
    if labelled {
        return error(
            400,
            "business_rules",
            "invalid_status",
            "Any label associated with the shipment needs to be voided first.",
        );
    }
    shipment.status = ShipmentStatus::Cancelled;
    shipment.modified_ms = now;
    shipment.label_due = None;
    // The file's `NoContent`: an empty `text/plain` body.
    let mut done = Response::empty(204);
    done.headers.push(("Content-Type".into(), "text/plain".into()));
    done
}

fn label_view(label: &Label) -> Value {
    let mut view = json!({
        "label_id": label.label_id, "status": if label.processing { "processing" } else if label.voided_ms.is_some() { "voided" } else { "completed" },
        "shipment_id": label.shipment_id, "created_at": format_ms(label.created_ms),
        "is_return_label": label.is_return, "carrier_id": "se-1001", "carrier_code": label.carrier_code,
        "service_code": label.service_code, "voided": label.voided_ms.is_some(),
        "packages": label.packages.iter().enumerate().map(|(at, oz)| json!({"package_id": at + 1,
            "weight": {"value": oz, "unit": "ounce"}})).collect::<Vec<_>>(),
    });
    if !label.processing {
        view["ship_date"] = json!(format!("{}T00:00:00Z", &format_ms(label.created_ms)[..10]));
        view["tracking_number"] = json!(label.tracking_number);
    }
    if let Some(external) = &label.external {
        view["external_shipment_id"] = json!(external);
    }
    if let Some(voided) = label.voided_ms {
        view["voided_at"] = json!(format_ms(voided));
    }
    view
}

fn number(request: &Request, name: &str, default: usize) -> Result<usize, String> {
    match request.param(name) {
        None => Ok(default),
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or(format!("{name} must be a whole number of at least 1")),
    }
}

fn time_param(request: &Request, name: &str) -> Result<Option<i64>, String> {
    request
        .param(name)
        .map(|t| {
            time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
                .map(|at| i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or_default())
                .map_err(|_| format!("{name} must be a date-time"))
        })
        .transpose()
}

/// `GET /v2/labels`, with the file's filters, sorting and pages.
fn labels(account: &Account, request: &Request) -> Response {
    let read = || -> Result<Value, String> {
        let (start, end) = (time_param(request, "created_at_start")?, time_param(request, "created_at_end")?);
        let page = number(request, "page", 1)?;
        let size = number(request, "page_size", 25)?;
        let mut list: Vec<&Label> = account
            .labels
            .iter()
            .filter(|l| start.is_none_or(|s| l.created_ms >= s) && end.is_none_or(|e| l.created_ms <= e))
            .filter(|l| request.param("shipment_id").is_none_or(|id| l.shipment_id == id))
            .filter(|l| request.param("tracking_number").is_none_or(|t| l.tracking_number == t))
            .filter(|l| request.param("label_status").is_none_or(|s| label_view(l)["status"] == s))
            .collect();
        let modified = request.param("sort_by") == Some("modified_at");
        list.sort_by_key(|l| {
            (if modified { l.voided_ms.unwrap_or(l.created_ms) } else { l.created_ms }, l.label_id.clone())
        });
        match request.param("sort_dir") {
            Some("asc") => {}
            None | Some("desc") => list.reverse(),
            Some(_) => return Err("sort_dir must be asc or desc".into()),
        }
        let total = list.len();
        let pages = total.div_ceil(size);
        let shown: Vec<Value> =
            list.iter().skip((page - 1) * size).take(size).map(|l| label_view(l)).collect();
        Ok(
            json!({"labels": shown, "total": total, "page": page, "pages": pages, "links": links("/v2/labels", request, page, pages)}),
        )
    };
    match read() {
        Ok(body) => Response::json(200, &body),
        Err(why) => error(400, "validation", "invalid_field_value", &why),
    }
}

/// `links` as the file's `pagination_link`: pages of the same request.
fn links(path: &str, request: &Request, page: usize, pages: usize) -> Value {
    let href = |n: usize| {
        let mut query: Vec<String> = request
            .query
            .iter()
            .filter(|(k, _)| k != "page")
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        query.push(format!("page={n}"));
        json!({"href": format!("{path}?{}", query.join("&"))})
    };
    json!({"first": href(1), "last": href(pages.max(1)),
           "prev": if page > 1 { href(page - 1) } else { json!({}) },
           "next": if page < pages { href(page + 1) } else { json!({}) }})
}

fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// `GET /v2/inventory`: rows per warehouse, `limit` a page, further pages by `links.next.href`.
fn inventory(account: &Account, request: &Request) -> Response {
    if account.no_inventory {
        return error(403, "security", "forbidden", "The Inventory API is not enabled for this account.");
    }
    let (Ok(limit), Ok(page)) = (number(request, "limit", 100), number(request, "page", 1)) else {
        return error(
            400,
            "validation",
            "invalid_field_value",
            "limit and page must be whole numbers of at least 1",
        );
    };
    let rows: Vec<&Stock> = account
        .stock
        .iter()
        .filter(|s| request.param("inventory_warehouse_id").is_none_or(|w| s.warehouse == w))
        .filter(|s| request.param("sku").is_none_or(|k| s.sku == k))
        .collect();
    let pages = rows.len().div_ceil(limit);
    let shown: Vec<Value> = rows
        .iter()
        .skip((page - 1) * limit)
        .take(limit)
        .map(|s| {
            json!({"sku": s.sku, "on_hand": s.on_hand, "allocated": s.allocated, "available": s.on_hand - s.allocated,
                   "inventory_warehouse_id": s.warehouse, "inventory_location_id": format!("{}-A1", s.warehouse)})
        })
        .collect();
    Response::json(
        200,
        &json!({"inventory": shown, "total": rows.len(), "page": page, "pages": pages,
                "links": links("/v2/inventory", request, page, pages)}),
    )
}
