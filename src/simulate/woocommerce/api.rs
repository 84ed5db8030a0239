//! The simulated store's side of the wire: the OAuth 1.0a and Basic checks, the routes of
//! the REST API v3 and of the Shipment Tracking extension, and the answers, errors and web
//! pages a WordPress site gives.

use super::super::http::{Request, Response};
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;
use std::sync::{Arc, Mutex};
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use super::*;

fn error(status: u16, code: &str, message: &str) -> Response {
    Response::json(status, &json!({"code": code, "message": message, "data": {"status": status}}))
}

fn page(status: u16, title: &str) -> Response {
    Response {
        status,
        headers: vec![("Content-Type".into(), "text/html; charset=UTF-8".into())],
        body: format!(
            "<!DOCTYPE html>\n<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
        )
        .into_bytes(),
    }
}

/// PHP's `rawurlencode`: everything but `A-Z a-z 0-9 - _ . ~`, as `%XX`.
fn rawurlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Who a request is, as WooCommerce's authentication decides it: `Ok(true)` a key with
/// write permission, `Ok(false)` read only, or the 401 it answers.
fn authenticate(store: &mut Store, request: &Request, host: &str) -> Result<bool, Response> {
    let refuse = |message: &str| error(401, "woocommerce_rest_authentication_error", message);
    let cannot_view = || error(401, "woocommerce_rest_cannot_view", "Sorry, you cannot list resources.");
    if store.behind_tls {
        let basic = request
            .header("authorization")
            .and_then(|h| h.strip_prefix("Basic "))
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
            .and_then(|d| String::from_utf8(d).ok())
            .and_then(|d| d.split_once(':').map(|(k, s)| (k.to_string(), s.to_string())));
        let query = request.param("consumer_key").zip(request.param("consumer_secret"));
        let given = query.map(|(k, s)| (k.to_string(), s.to_string())).or(basic);
        return match given {
            // An unknown key sets no error: the request runs unauthenticated.
            Some((key, _)) if key != store.key => Err(cannot_view()),
            Some((_, secret)) if secret != store.secret => Err(refuse("Consumer secret is invalid.")),
            Some(_) => Ok(!store.read_only),
            None => Err(cannot_view()),
        };
    }
    let param = |name: &str| request.param(name).filter(|v| !v.is_empty());
    let names =
        ["oauth_consumer_key", "oauth_timestamp", "oauth_nonce", "oauth_signature", "oauth_signature_method"];
    let missing: Vec<&str> = names.iter().copied().filter(|n| param(n).is_none()).collect();
    if missing.len() == names.len() {
        return Err(cannot_view());
    }
    if !missing.is_empty() {
        return Err(error(
            401,
            "woocommerce_rest_authentication_missing_parameter",
            &format!("Missing OAuth parameters {}", missing.join(", ")),
        ));
    }
    if param("oauth_consumer_key") != Some(store.key.as_str()) {
        return Err(refuse("Consumer key is invalid."));
    }
    if param("oauth_signature_method") != Some("HMAC-SHA256") {
        return Err(refuse("Invalid signature - signature method is invalid."));
    }
    // The base string as WooCommerce builds it: the parameters but the signature, sorted by
    // name, each `name=value` encoded, and that encoded again and joined with `%26`.
    let mut params: Vec<&(String, String)> =
        request.query.iter().filter(|(k, _)| k != "oauth_signature").collect();
    params.sort_by(|a, b| a.0.cmp(&b.0));
    let joined: Vec<String> = params
        .iter()
        .map(|(k, v)| rawurlencode(&format!("{}={}", rawurlencode(k), rawurlencode(v))))
        .collect();
    let uri = rawurlencode(&format!("http://{host}{}", request.path));
    let to_sign = format!("{}&{uri}&{}", request.method.to_ascii_uppercase(), joined.join("%26"));
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(format!("{}&", store.secret).as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(to_sign.as_bytes());
    let expected = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    if param("oauth_signature") != Some(expected.as_str()) {
        return Err(refuse("Invalid signature - provided signature does not match."));
    }
    let now = now_ms() / 1000;
    let timestamp = param("oauth_timestamp").and_then(|t| t.parse::<i64>().ok()).unwrap_or(0);
    if (timestamp - now).abs() > OAUTH_WINDOW_SECS {
        return Err(refuse("Invalid timestamp."));
    }
    store.nonces.retain(|_, at| *at >= now - OAUTH_WINDOW_SECS);
    let nonce = param("oauth_nonce").unwrap_or_default().to_string();
    if store.nonces.contains_key(&nonce) {
        return Err(refuse("Invalid nonce - nonce has already been used."));
    }
    store.nonces.insert(nonce, timestamp);
    Ok(!store.read_only)
}

pub(super) async fn answer(state: &Arc<Mutex<Store>>, request: Request) -> Response {
    let delay = {
        let mut store = super::super::running::lock(state);
        store.in_flight += 1;
        store.max_in_flight = store.max_in_flight.max(store.in_flight);
        store.delay
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut store = super::super::running::lock(state);
    store.in_flight -= 1;
    let mut response = handle(&mut store, &request);
    response.headers.push(("Date".into(), httpdate::fmt_http_date(std::time::SystemTime::now())));
    response
}

fn handle(store: &mut Store, request: &Request) -> Response {
    let shown: Vec<String> = request
        .query
        .iter()
        .filter(|(k, _)| !k.starts_with("oauth_") && !k.starts_with("consumer_"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let shown = if shown.is_empty() { String::new() } else { format!("?{}", shown.join("&")) };
    store.requests.push(format!("{} {}{shown}", request.method, request.path));
    let host = request.header("host").unwrap_or("127.0.0.1").to_string();
    // Which route, if any: `/wp-json/<route>`, or `rest_route` with plain permalinks.
    let route = match (request.path.strip_prefix("/wp-json/"), request.param("rest_route")) {
        (Some(_), _) if store.plain_permalinks => return page(404, "Page not found"),
        (Some(route), _) => route.to_string(),
        (None, Some(route)) if request.path == "/" => route.trim_start_matches('/').to_string(),
        (None, _) if request.path == "/" && matches!(request.method.as_str(), "GET" | "HEAD") => {
            let root = if store.plain_permalinks {
                format!("http://{host}/?rest_route=/")
            } else {
                format!("http://{host}/wp-json/")
            };
            return Response {
                status: 200,
                headers: vec![
                    ("Content-Type".into(), "text/html; charset=UTF-8".into()),
                    ("Link".into(), format!("<{root}>; rel=\"https://api.w.org/\"")),
                ],
                body: Vec::new(),
            };
        }
        _ => return page(404, "Page not found"),
    };
    let asked = format!("{} {route}", request.method);
    let fault = store.faults.take(|path| asked.contains(path));
    match fault {
        Some(Fault::Status(status)) => return error(status, "simulated", "Simulated failure."),
        Some(Fault::RetryAfter(status, secs)) => {
            let mut r =
                page(status, "Briefly unavailable for scheduled maintenance. Check back in a minute.");
            r.headers.push(("Retry-After".into(), secs.to_string()));
            return r;
        }
        Some(Fault::Page(status)) => return page(status, "Access denied by the site's firewall"),
        Some(Fault::Redirect) => {
            let mut r = page(301, "Moved Permanently");
            r.headers.push(("Location".into(), format!("https://{host}{}", request.path)));
            return r;
        }
        _ => {}
    }
    let write = matches!(request.method.as_str(), "POST" | "PUT" | "DELETE");
    let may_write = match authenticate(store, request, &host) {
        Ok(may_write) => may_write,
        Err(refused) => return refused,
    };
    if write && !may_write {
        return error(
            401,
            "woocommerce_rest_authentication_error",
            "The API key provided does not have write permissions.",
        );
    }
    let mut response = route_to(store, request, &route);
    match fault {
        Some(Fault::AnswerLost(status)) => error(status, "simulated", "Simulated gateway timeout."),
        Some(Fault::Oversized(bytes)) => {
            let mut body = Vec::with_capacity(bytes.max(2));
            body.push(b'[');
            while body.len() + 2 < bytes {
                body.extend_from_slice(b"0,");
            }
            body.extend_from_slice(b"0]");
            response.body = body;
            response.status = 200;
            response
        }
        Some(Fault::WarningFirst) if response.status < 300 => {
            let mut body = b"<br />\n<b>Warning</b>:  Undefined array key \"x\" in <b>/var/www/wp-content/plugins/a/a.php</b> on line <b>12</b><br />\n".to_vec();
            body.extend_from_slice(&response.body);
            response.body = body;
            response
        }
        _ => response,
    }
}

fn no_route() -> Response {
    error(404, "rest_no_route", "No route was found matching the URL and request method.")
}

fn body_of(request: &Request) -> Result<Value, Response> {
    serde_json::from_slice(&request.body)
        .map_err(|_| error(400, "rest_invalid_json", "Invalid JSON body passed."))
}

fn route_to(store: &mut Store, request: &Request, route: &str) -> Response {
    let parts: Vec<&str> = route.trim_end_matches('/').split('/').collect();
    if store.inactive {
        return no_route();
    }
    let id = |text: &str| text.parse::<i64>().ok();
    match (request.method.as_str(), parts.as_slice()) {
        ("GET", ["wc", "v3", "orders"]) => list_orders(store, request),
        ("POST", ["wc", "v3", "orders", "batch"]) => Response::json(200, &json!([])),
        ("GET", ["wc", "v3", "orders", order]) => match id(order).and_then(|o| store.orders.get(&o)) {
            Some(order) => Response::json(200, &fields(order.json(), request.param("_fields"))),
            None => error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid ID."),
        },
        ("PUT", ["wc", "v3", "orders", order]) => update_order(store, id(order), request),
        ("GET", ["wc", "v3", "orders", order, "notes"]) => {
            match id(order).filter(|o| store.orders.contains_key(o)) {
                Some(order) => {
                    let notes: Vec<Value> = store
                        .notes
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| n.order_id == order)
                        .map(|(i, n)| {
                            // WordPress shows a note's text through wpautop and wptexturize.
                            let shown = html_escape::encode_text(&n.text).replace('\n', "<br />\n");
                            json!({"id": 300 + i, "author": "system", "date_created_gmt": wc_date(now_ms()),
                               "note": format!("<p>{shown}</p>\n"), "customer_note": n.customer_note})
                        })
                        .collect();
                    Response::json(200, &Value::Array(notes))
                }
                None => error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid order ID."),
            }
        }
        ("POST", ["wc", "v3", "orders", order, "notes"]) => add_note(store, id(order), request),
        ("GET" | "POST", ["wc-shipment-tracking", "v3", ..]) if !store.extension => no_route(),
        ("GET", ["wc-shipment-tracking", "v3", "shipment-trackings", "providers"]) => {
            let regions: Map<String, Value> = PROVIDERS
                .iter()
                .map(|(region, names)| {
                    let names: Map<String, Value> =
                        names.iter().map(|n| (n.to_string(), json!("https://track.example/%1$s"))).collect();
                    (region.to_string(), Value::Object(names))
                })
                .collect();
            Response::json(200, &Value::Object(regions))
        }
        ("GET", ["wc-shipment-tracking", "v3", "orders", order, "shipment-trackings"]) => {
            match id(order).filter(|o| store.orders.contains_key(o)) {
                Some(order) => Response::json(
                    200,
                    &Value::Array(
                        store.trackings.iter().filter(|t| t.order_id == order).map(tracking_json).collect(),
                    ),
                ),
                None => error(404, "woocommerce_rest_order_invalid_id", "Invalid order ID."),
            }
        }
        ("POST", ["wc-shipment-tracking", "v3", "orders", order, "shipment-trackings"]) => {
            add_tracking(store, id(order), request)
        }
        ("GET", ["wc", "v3", "products"]) => find_products(store, request),
        ("POST", ["wc", "v3", "products", "batch"]) => batch(store, request, None),
        ("POST", ["wc", "v3", "products", parent, "variations", "batch"]) => {
            batch(store, request, id(parent))
        }
        _ => no_route(),
    }
}

/// The object cut to `_fields`, as WordPress cuts responses.
fn fields(v: Value, wanted: Option<&str>) -> Value {
    let (Some(wanted), Value::Object(map)) = (wanted, &v) else { return v };
    let names: Vec<&str> = wanted.split(',').map(str::trim).collect();
    Value::Object(
        map.iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

fn invalid_param(name: &str, problem: &str) -> Response {
    Response::json(
        400,
        &json!({"code": "rest_invalid_param", "message": format!("Invalid parameter(s): {name}"),
                "data": {"status": 400, "params": {name: problem}}}),
    )
}

/// A `modified_after` as WordPress reads it: without a zone, in the site's timezone (its
/// digits compared with the GMT column when `dates_are_gmt`); with one, converted into the
/// site's timezone first.
fn filter_time(text: &str, store: &Store, gmt: bool) -> Option<i64> {
    let offset = UtcOffset::from_whole_seconds(store.site_offset).ok()?;
    let digits = match PrimitiveDateTime::parse(text, WC_DATE) {
        Ok(plain) => plain,
        Err(_) => {
            let zoned = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
            let local = zoned.to_offset(offset);
            PrimitiveDateTime::new(local.date(), local.time())
        }
    };
    let ms = crate::dates::to_ms(digits.assume_utc());
    // Without `dates_are_gmt` the digits are compared with the site's local column.
    Some(if gmt { ms } else { ms - i64::from(store.site_offset) * 1000 })
}

fn list_orders(store: &mut Store, request: &Request) -> Response {
    let statuses: Vec<&str> = request.param("status").unwrap_or("any").split(',').collect();
    if let Some(bad) = statuses.iter().find(|s| **s != "any" && !STATUSES.contains(s)) {
        return invalid_param(
            "status",
            &format!("status[0] is not one of any, {}; got {bad}.", STATUSES.join(", ")),
        );
    }
    let orderby = request.param("orderby").unwrap_or("date");
    if !["date", "id", "include", "title", "slug", "modified"].contains(&orderby) {
        return invalid_param(
            "orderby",
            "orderby is not one of date, id, include, title, slug, and modified.",
        );
    }
    let ascending = match request.param("order").unwrap_or("desc") {
        "asc" => true,
        "desc" => false,
        _ => return invalid_param("order", "order is not one of asc and desc."),
    };
    let per_page = request.param("per_page").map_or(Ok(10), str::parse::<usize>);
    let page = request.param("page").map_or(Ok(1), str::parse::<usize>);
    let (Ok(per_page), Ok(page)) = (per_page, page) else {
        return invalid_param("per_page", "per_page and page must be integers.");
    };
    if !(1..=MAX_PER_PAGE).contains(&per_page) {
        return invalid_param("per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)");
    }
    let gmt = request.param("dates_are_gmt") == Some("true");
    let after = match request.param("modified_after") {
        None => None,
        Some(text) => match filter_time(text, store, gmt) {
            Some(ms) => Some(ms),
            None => return invalid_param("modified_after", "Invalid date."),
        },
    };
    let after = after.filter(|_| !store.ignores_modified_after);
    let mut matching: Vec<&Order> = store
        .orders
        .values()
        .filter(|o| statuses.contains(&"any") && o.status != "trash" || statuses.contains(&o.status.as_str()))
        .filter(|o| after.is_none_or(|a| o.modified_ms > a))
        .collect();
    let key = |o: &Order| match orderby {
        "modified" => (o.modified_ms, o.id),
        "id" => (o.id, 0),
        _ => (o.created_ms, o.id),
    };
    matching.sort_by_key(|o| key(o));
    if !ascending {
        matching.reverse();
    }
    let total = matching.len();
    let listed: Vec<Value> = matching
        .iter()
        .skip((page.max(1) - 1) * per_page)
        .take(per_page)
        .map(|o| fields(o.json(), request.param("_fields")))
        .collect();
    store.list_pages += 1;
    if let Some((at, id)) = store.touch_after_page
        && store.list_pages >= at
    {
        store.touch_after_page = None;
        if let Some(order) = store.orders.get_mut(&id) {
            order.email = format!("changed-{}", order.email);
            order.modified_ms = now_ms().max(order.modified_ms + 1000);
        }
    }
    let mut response = Response::json(200, &Value::Array(listed));
    response.headers.push(("X-WP-Total".into(), total.to_string()));
    response.headers.push(("X-WP-TotalPages".into(), total.div_ceil(per_page).to_string()));
    response
}

fn update_order(store: &mut Store, id: Option<i64>, request: &Request) -> Response {
    let body = match body_of(request) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let Some(order) = id.and_then(|id| store.orders.get_mut(&id)) else {
        return error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid ID.");
    };
    if let Some(status) = body.get("status").and_then(Value::as_str) {
        if !STATUSES.contains(&status) {
            return invalid_param("status", "status is not one of the order statuses.");
        }
        if order.status != status {
            let text = format!("Order status changed from {} to {status}.", order.status);
            order.status = status.to_string();
            order.modified_ms = now_ms().max(order.modified_ms);
            let order_id = order.id;
            store.notes.push(Note { order_id, text, customer_note: false });
            crate::logging::notice(format_args!("simulated WooCommerce: order {order_id} is now {status}"));
        }
    }
    let Some(order) = id.and_then(|id| store.orders.get(&id)) else {
        return error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid ID.");
    };
    Response::json(200, &order.json())
}

fn add_note(store: &mut Store, id: Option<i64>, request: &Request) -> Response {
    let body = match body_of(request) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let Some(order_id) = id.filter(|o| store.orders.contains_key(o)) else {
        return error(404, "woocommerce_rest_shop_order_invalid_id", "Invalid order ID.");
    };
    let Some(text) = body.get("note").and_then(Value::as_str).filter(|n| !n.is_empty()) else {
        return Response::json(
            400,
            &json!({"code": "rest_missing_callback_param", "message": "Missing parameter(s): note", "data": {"status": 400, "params": ["note"]}}),
        );
    };
    let customer_note = body.get("customer_note").and_then(Value::as_bool).unwrap_or(false);
    store.notes.push(Note { order_id, text: text.to_string(), customer_note });
    crate::logging::notice(format_args!(
        "simulated WooCommerce: order {order_id} got a note: {}",
        text.lines().next().unwrap_or_default()
    ));
    Response::json(
        201,
        &json!({"id": 300 + store.notes.len(), "author": "orderbridge", "note": text, "customer_note": customer_note}),
    )
}

fn tracking_json(t: &TrackingItem) -> Value {
    let id = format!(
        "{:x}",
        t.tracking_number.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
    );
    json!({"tracking_id": id, "tracking_provider": t.provider, "tracking_link": format!("https://track.example/{}", t.tracking_number),
           "tracking_number": t.tracking_number, "date_shipped": t.date_shipped})
}

fn add_tracking(store: &mut Store, id: Option<i64>, request: &Request) -> Response {
    let body = match body_of(request) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let Some(order_id) = id.filter(|o| store.orders.contains_key(o)) else {
        return error(404, "woocommerce_rest_order_invalid_id", "Invalid order ID.");
    };
    let Some(number) = body.get("tracking_number").and_then(Value::as_str).filter(|n| !n.trim().is_empty())
    else {
        return invalid_param("tracking_number", "tracking_number is required.");
    };
    let text = |k: &str| body.get(k).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_string);
    let (provider, custom) = match (text("tracking_provider"), text("custom_tracking_provider")) {
        (Some(p), _) if PROVIDERS.iter().any(|(_, names)| names.contains(&p.as_str())) => (p, false),
        (Some(p), _) => {
            return invalid_param("tracking_provider", &format!("{p} is not a provider this store lists."));
        }
        (None, Some(custom)) => (custom, true),
        (None, None) => {
            return invalid_param("tracking_provider", "A provider or a custom provider is required.");
        }
    };
    let date_shipped = text("date_shipped").unwrap_or_else(|| wc_date(now_ms())[..10].to_string());
    let item = TrackingItem { order_id, tracking_number: number.to_string(), provider, custom, date_shipped };
    crate::logging::notice(format_args!("simulated WooCommerce: order {order_id} got tracking {number}"));
    let answer = tracking_json(&item);
    store.trackings.push(item);
    Response::json(201, &answer)
}

fn find_products(store: &Store, request: &Request) -> Response {
    let skus: Vec<&str> =
        request.param("sku").map(|s| s.split(',').map(str::trim).collect()).unwrap_or_default();
    let per_page = request.param("per_page").and_then(|p| p.parse::<usize>().ok()).unwrap_or(10);
    if !(1..=MAX_PER_PAGE).contains(&per_page) {
        return invalid_param("per_page", "per_page must be between 1 (inclusive) and 100 (inclusive)");
    }
    let mut ids: Vec<i64> = if skus.is_empty() {
        store.products.values().filter(|p| p.kind != "variation").map(|p| p.id).collect()
    } else {
        skus.iter().flat_map(|sku| store.skus.get(*sku).into_iter().flatten().copied()).collect()
    };
    ids.sort_unstable();
    ids.dedup();
    let found: Vec<Value> = ids
        .iter()
        .filter_map(|id| store.products.get(id))
        .take(per_page)
        .map(|p| {
            let v = json!({"id": p.id, "parent_id": p.parent_id, "type": p.kind, "sku": p.sku,
                           "manage_stock": p.manage_stock, "stock_quantity": p.stock});
            fields(v, request.param("_fields"))
        })
        .collect();
    Response::json(200, &Value::Array(found))
}

fn batch(store: &mut Store, request: &Request, parent: Option<i64>) -> Response {
    let body = match body_of(request) {
        Ok(body) => body,
        Err(e) => return e,
    };
    let updates = body.get("update").and_then(Value::as_array).cloned().unwrap_or_default();
    if updates.len() > MAX_PER_PAGE {
        return error(
            413,
            "woocommerce_rest_request_entity_too_large",
            "Unable to accept more than 100 items for this request.",
        );
    }
    store.batches.push(updates.len());
    let item_error = |id: i64, status: u16, code: &str, message: &str| json!({"id": id, "error": {"code": code, "message": message, "data": {"status": status}}});
    let mut answers = Vec::new();
    let mut changed = Vec::new();
    for update in &updates {
        let id = update.get("id").and_then(Value::as_i64).unwrap_or(0);
        let product = store.products.get_mut(&id);
        let answer = match (product, parent) {
            (None, _) => item_error(id, 400, "woocommerce_rest_product_invalid_id", "Invalid ID."),
            (Some(p), None) if p.kind == "variation" => item_error(
                id,
                404,
                "woocommerce_rest_product_invalid_id",
                "To manipulate product variations you should use the /products/<product_id>/variations/<id> endpoint.",
            ),
            (Some(p), Some(parent)) if p.kind != "variation" || p.parent_id != parent => {
                item_error(id, 400, "woocommerce_rest_product_variation_invalid_id", "Invalid ID.")
            }
            (Some(p), _) if p.refuse => item_error(
                id,
                400,
                "woocommerce_rest_cannot_edit",
                "Sorry, you are not allowed to edit this resource.",
            ),
            (Some(p), _) => {
                if let Some(manage) = update.get("manage_stock").and_then(Value::as_bool) {
                    p.manage_stock = manage;
                }
                if let Some(level) = update.get("stock_quantity").and_then(Value::as_i64) {
                    p.stock = Some(level);
                }
                changed.push(json!({"sku": p.sku, "level": p.stock}));
                json!({"id": p.id, "sku": p.sku, "manage_stock": p.manage_stock, "stock_quantity": p.stock})
            }
        };
        answers.push(answer);
    }
    if !changed.is_empty() {
        crate::logging::notice(format_args!(
            "simulated WooCommerce: stock set for {} SKUs: {}",
            changed.len(),
            super::super::levels(&changed, "level")
        ));
    }
    Response::json(200, &json!({"update": answers}))
}
