//! Shopify shops on loopback, answering the Admin GraphQL API (2026-07) as Shopify does:
//! `POST /{shop}/admin/api/2026-07/graphql.json` with `X-Shopify-Access-Token`, and the
//! client credentials grant at `/{shop}/admin/oauth/access_token`. Each request's document is
//! parsed, validated and executed ([`graphql`]); its cost is charged to the shop's leaky
//! bucket by Shopify's published rules, and a request the bucket cannot pay for gets HTTP 200
//! with `THROTTLED` and the bucket's `throttleStatus`. Tokens carry scopes, and a field the
//! token may not read is `ACCESS_DENIED`; a frozen or locked shop answers 402 or 423, an
//! unknown one 404. Tests, the sync benchmark and the demo drive the real client against it;
//! orderbridge's `shopify_api_base` points at [`Simulator::base_url`].

pub mod data;
pub mod graphql;
mod resolve;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::Rng;
use super::http::{Request, Response};
use super::running::Faults;
use data::ShopData;
use graphql::error;
use resolve::execute;

/// The API version the shop serves.
pub const VERSION: &str = "2026-07";

/// Shopify's largest single query.
const MAX_COST: u32 = 1_000;

/// Scopes that let a token read (or write) what a field needs: any one of them will do.
/// A write scope includes its read scope.
fn scopes_for(parent: &str, field: &str) -> &'static [&'static str] {
    const FULFILLMENT_READ: &[&str] = &[
        "read_merchant_managed_fulfillment_orders",
        "write_merchant_managed_fulfillment_orders",
        "read_third_party_fulfillment_orders",
        "write_third_party_fulfillment_orders",
        "read_assigned_fulfillment_orders",
        "write_assigned_fulfillment_orders",
    ];
    match (parent, field) {
        ("QueryRoot", "orders" | "order") => &["read_orders", "write_orders"],
        ("QueryRoot", "fulfillmentOrder") | ("Order", "fulfillmentOrders") => FULFILLMENT_READ,
        ("Mutation", "fulfillmentCreate") => &[
            "write_merchant_managed_fulfillment_orders",
            "write_third_party_fulfillment_orders",
            "write_assigned_fulfillment_orders",
        ],
        ("QueryRoot", "inventoryItems") => {
            &["read_inventory", "write_inventory", "read_products", "write_products"]
        }
        ("Mutation", "inventorySetQuantities") => &["write_inventory"],
        ("QueryRoot", "location") => &["read_locations", "write_locations", "read_markets_home"],
        _ => &[],
    }
}

/// Every scope a simulated app may hold.
pub const ALL_SCOPES: [&str; 9] = [
    "read_orders",
    "read_products",
    "read_inventory",
    "write_inventory",
    "read_locations",
    "read_merchant_managed_fulfillment_orders",
    "write_merchant_managed_fulfillment_orders",
    "read_third_party_fulfillment_orders",
    "write_third_party_fulfillment_orders",
];

/// What the next requests (of one operation, or any) answer instead of the shop.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// This HTTP status, with Shopify's body for it.
    Status(u16),
    /// 429 with `Retry-After` (seconds, may be fractional).
    RetryAfter(f64),
    /// HTTP 200 with a top-level GraphQL error of this code.
    Code(&'static str),
    /// The request is carried out, and its answer lost (a 502 from a proxy).
    LoseAnswer,
}

/// A request as the shop logged it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub operation: String,
    pub variables: Value,
    /// HTTP status answered.
    pub status: u16,
    pub requested_cost: Option<u32>,
    pub actual_cost: Option<u32>,
    pub throttled: bool,
    /// When it arrived.
    pub at: Instant,
}

/// A token and what it may do.
#[derive(Debug, Clone)]
struct Token {
    scopes: Vec<String>,
    expires: Option<Instant>,
}

#[derive(Debug, Clone)]
struct App {
    client_id: String,
    client_secret: String,
    scopes: Vec<String>,
    expires_in: u64,
}

/// Shopify's leaky bucket: `available` points refilled at `rate` a second up to `maximum`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    maximum: f64,
    rate: f64,
    available: f64,
    at: Instant,
}

impl Bucket {
    fn refill(&mut self) {
        let now = Instant::now();
        self.available =
            (self.available + now.duration_since(self.at).as_secs_f64() * self.rate).min(self.maximum);
        self.at = now;
    }

    fn status(&self) -> Value {
        json!({"maximumAvailable": self.maximum, "currentlyAvailable": self.available.floor(), "restoreRate": self.rate})
    }
}

struct Shop {
    data: ShopData,
    tokens: HashMap<String, Token>,
    apps: Vec<App>,
    bucket: Bucket,
    /// (operation name or empty for any, fault).
    faults: Faults<Fault>,
    log: Vec<Logged>,
    /// 402 (frozen) or 423 (locked).
    unavailable: Option<u16>,
    delay: Duration,
    tokens_issued: usize,
    rng: Rng,
}

/// The simulator's shops, by domain; reached through a [`Handle`].
#[derive(Default)]
pub struct State {
    shops: HashMap<String, Shop>,
}

/// A running Shopify simulator; dropping it stops it. Its methods are its [`Handle`]'s.
pub type Simulator = super::Simulator<State>;

/// What a simulator's owner (a test, the demo's tasks) uses to change and read its state.
pub type Handle = super::Handle<State>;

fn now_ms() -> i64 {
    crate::dates::now_ms()
}

impl Simulator {
    pub async fn start() -> Simulator {
        Simulator::serve(State::default(), "Shopify", |state, request| async move {
            answer(&state, request).await
        })
        .await
    }

    /// Where orderbridge's `shopify_api_base` should point: the shop is the first segment.
    pub fn base_url(&self) -> String {
        format!("{}/{{shop}}", self.origin())
    }
}

impl Handle {
    fn with_shop<T>(&self, domain: &str, f: impl FnOnce(&mut Shop) -> T) -> T {
        let mut state = self.lock();
        let shop = state.shops.entry(domain.to_ascii_lowercase()).or_insert_with(|| Shop {
            data: ShopData::new(&domain.to_ascii_lowercase()),
            tokens: HashMap::new(),
            apps: Vec::new(),
            bucket: Bucket { maximum: 2000.0, rate: 100.0, available: 2000.0, at: Instant::now() },
            faults: Faults::default(),
            log: Vec::new(),
            unavailable: None,
            delay: Duration::ZERO,
            tokens_issued: 0,
            rng: Rng::new(domain.len() as u64),
        });
        f(shop)
    }

    /// A shop with an access token holding `scopes`.
    pub fn add_shop(&self, domain: &str, token: &str, scopes: &[&str]) {
        self.add_token(domain, token, scopes);
    }

    pub fn add_token(&self, domain: &str, token: &str, scopes: &[&str]) {
        self.with_shop(domain, |shop| {
            let scopes = scopes.iter().map(|s| s.to_string()).collect();
            shop.tokens.insert(token.to_string(), Token { scopes, expires: None });
        });
    }

    /// An app installed on the shop, whose client credentials get tokens of `scopes`
    /// lasting `expires_in` seconds.
    pub fn add_app(
        &self,
        domain: &str,
        client_id: &str,
        client_secret: &str,
        scopes: &[&str],
        expires_in: u64,
    ) {
        self.with_shop(domain, |shop| {
            shop.apps.push(App {
                client_id: client_id.into(),
                client_secret: client_secret.into(),
                scopes: scopes.iter().map(|s| s.to_string()).collect(),
                expires_in,
            });
        });
    }

    /// Tokens fetched with client credentials so far.
    pub fn tokens_issued(&self, domain: &str) -> usize {
        self.with_shop(domain, |shop| shop.tokens_issued)
    }

    /// The tokens fetched with client credentials and still held, for a test that looks for
    /// them where they must not be.
    pub fn fetched_tokens(&self, domain: &str) -> Vec<String> {
        self.with_shop(domain, |shop| {
            shop.tokens.iter().filter(|(_, t)| t.expires.is_some()).map(|(k, _)| k.clone()).collect()
        })
    }

    /// Revokes every token fetched with client credentials (as an app's reinstall would).
    pub fn revoke_fetched_tokens(&self, domain: &str) {
        self.with_shop(domain, |shop| shop.tokens.retain(|_, t| t.expires.is_none()));
    }

    /// Adds `count` paid, unfulfilled orders, a minute apart on a first load (ending a minute
    /// ago) and changed now after it, with one to three lines each; the same seed gives the
    /// same orders. Returns their ids.
    pub fn add_orders(&self, domain: &str, count: usize, seed: u64) -> Vec<i64> {
        let mut rng = Rng::new(seed);
        let now = now_ms();
        self.with_shop(domain, |shop| {
            let times: Vec<i64> = if shop.data.orders.is_empty() {
                data::first_load_times(count, now).collect()
            } else {
                vec![now / 1000 * 1000; count]
            };
            times
                .into_iter()
                .map(|at| {
                    let order = shop.data.generated(&mut rng, at);
                    shop.data.insert(order)
                })
                .collect()
        })
    }

    /// Takes in an order the shop had before the simulator started (the demo's history),
    /// paid and unfulfilled, last changed when it was placed, so a pull from a later cursor
    /// does not list it but its shipments can be reported. `lines` are (line id, sku, units).
    pub fn adopt_order(&self, domain: &str, id: i64, placed_ms: i64, lines: &[(i64, String, i64)]) {
        let placed = placed_ms / 1000 * 1000;
        self.with_shop(domain, |shop| {
            let mut rng = Rng::new(id as u64);
            let mut order = shop.data.generated(&mut rng, placed);
            order.id = id;
            order.number = id;
            order.processed_ms = placed;
            order.lines = lines
                .iter()
                .map(|(line, sku, units)| data::Line {
                    id: *line,
                    name: format!("Product {sku}"),
                    sku: Some(sku.clone()),
                    quantity: *units,
                    current_quantity: *units,
                    requires_shipping: true,
                    price: "10.00".into(),
                    discount: "0.00".into(),
                    taxes: Vec::new(),
                    weight: Some(("GRAMS", 250.0)),
                    variant: None,
                })
                .collect();
            shop.data.insert(order);
        });
    }

    /// Reads or changes the shop's records directly.
    pub fn edit<T>(&self, domain: &str, f: impl FnOnce(&mut ShopData) -> T) -> T {
        self.with_shop(domain, |shop| f(&mut shop.data))
    }

    /// Changes an order as a merchant would (its `updatedAt` becomes now).
    pub fn change_order(&self, domain: &str, id: i64, f: impl FnOnce(&mut data::Order)) {
        self.with_shop(domain, |shop| {
            shop.data.change(id, now_ms(), f);
        });
    }

    pub fn cancel_order(&self, domain: &str, id: i64) {
        let now = now_ms();
        self.change_order(domain, id, |order| {
            order.cancelled_ms = Some(now);
            order.closed = true;
        });
    }

    /// An inventory item; `stocked` puts a level at the primary location.
    pub fn add_item(&self, domain: &str, sku: &str, tracked: bool, stocked: bool) -> i64 {
        self.with_shop(domain, |shop| shop.data.add_item(sku, tracked, stocked))
    }

    /// The next `count` requests (of `operation`, or any when empty) answer `fault`. Adds
    /// to the faults set before.
    pub fn fail_next(&self, domain: &str, operation: &str, fault: Fault, count: usize) {
        self.with_shop(domain, |shop| {
            shop.faults.add(operation, fault, count);
        });
    }

    /// The shop's bucket: `maximum` points, refilled at `rate` a second, `available` now.
    pub fn set_bucket(&self, domain: &str, maximum: f64, rate: f64, available: f64) {
        self.with_shop(domain, |shop| {
            shop.bucket = Bucket { maximum, rate, available: available.min(maximum), at: Instant::now() };
        });
    }

    /// 402 (frozen) or 423 (locked) for every request while set.
    pub fn set_unavailable(&self, domain: &str, status: Option<u16>) {
        self.with_shop(domain, |shop| shop.unavailable = status);
    }

    /// Every answer waits this long first.
    pub fn set_delay(&self, domain: &str, delay: Duration) {
        self.with_shop(domain, |shop| shop.delay = delay);
    }

    /// Every API request the shop received.
    pub fn log(&self, domain: &str) -> Vec<Logged> {
        self.with_shop(domain, |shop| shop.log.clone())
    }

    /// The fulfillments the shop made, oldest first.
    pub fn fulfillments(&self, domain: &str) -> Vec<data::Fulfillment> {
        self.with_shop(domain, |shop| shop.data.fulfillments())
    }

    /// Available units by SKU at the primary location.
    pub fn available(&self, domain: &str) -> std::collections::BTreeMap<String, i64> {
        self.with_shop(domain, |shop| shop.data.available())
    }
}

fn error_body(status: u16, message: &str) -> Response {
    Response::json(status, &json!({"errors": message}))
}

async fn answer(state: &Arc<Mutex<State>>, request: Request) -> Response {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let (domain, rest) = match parts.split_first() {
        Some((domain, rest)) => (domain.to_ascii_lowercase(), rest.to_vec()),
        None => return error_body(404, "Not Found"),
    };
    let delay = {
        let state = super::running::lock(state);
        match state.shops.get(&domain) {
            Some(shop) => shop.delay,
            None => return error_body(404, "Not Found"),
        }
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut state = super::running::lock(state);
    let Some(shop) = state.shops.get_mut(&domain) else { return error_body(404, "Not Found") };
    match (request.method.as_str(), rest.as_slice()) {
        ("POST", ["admin", "oauth", "access_token"]) => grant(shop, &request),
        ("POST", ["admin", "api", version, "graphql.json"]) if *version == VERSION => graphql(shop, &request),
        _ => error_body(404, "Not Found"),
    }
}

/// The client credentials grant.
fn grant(shop: &mut Shop, request: &Request) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&request.body).into_owned().collect();
    let refuse = |status: u16, error: &str, description: &str| {
        Response::json(status, &json!({"error": error, "error_description": description}))
    };
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return refuse(400, "unsupported_grant_type", "The grant type must be client_credentials.");
    }
    let app = shop.apps.iter().find(|a| {
        Some(&a.client_id) == form.get("client_id") && Some(&a.client_secret) == form.get("client_secret")
    });
    let Some(app) = app.cloned() else {
        return refuse(
            400,
            "invalid_client",
            "Client authentication failed: unknown client or wrong secret.",
        );
    };
    let token = format!("shpat_sim_{:016x}{:016x}", shop.rng.next(), shop.rng.next());
    shop.tokens.insert(
        token.clone(),
        Token {
            scopes: app.scopes.clone(),
            expires: Some(Instant::now() + Duration::from_secs(app.expires_in)),
        },
    );
    shop.tokens_issued += 1;
    Response::json(
        200,
        &json!({"access_token": token, "scope": app.scopes.join(","), "expires_in": app.expires_in}),
    )
}

/// One Admin API request.
fn graphql(shop: &mut Shop, request: &Request) -> Response {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let operation = body.get("operationName").and_then(Value::as_str).unwrap_or_default().to_string();
    let variables = body.get("variables").cloned().filter(|v| !v.is_null()).unwrap_or_else(|| json!({}));
    let mut logged = Logged {
        operation: operation.clone(),
        variables: variables.clone(),
        status: 200,
        requested_cost: None,
        actual_cost: None,
        throttled: false,
        at: Instant::now(),
    };
    let response = run(shop, request, &body, &mut logged);
    logged.status = response.status;
    shop.log.push(logged);
    response
}

fn run(shop: &mut Shop, request: &Request, body: &Value, logged: &mut Logged) -> Response {
    let fault = shop.faults.take(|op| op.is_empty() || op == logged.operation);
    match fault {
        Some(Fault::Status(status)) => {
            let message = match status {
                401 => "[API] Invalid API key or access token (unrecognized login or wrong password)",
                402 => "Unavailable Shop",
                403 => "[API] This action requires merchant approval for the needed scope.",
                423 => "This shop is unavailable",
                _ => "Simulated failure",
            };
            return error_body(status, message);
        }
        Some(Fault::RetryAfter(seconds)) => {
            let mut r = error_body(
                429,
                "Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.",
            );
            r.headers.push(("Retry-After".into(), format!("{seconds:.1}")));
            return r;
        }
        Some(Fault::Code(code)) => {
            return Response::json(200, &json!({"errors": [error(format!("Simulated {code}"), Some(code))]}));
        }
        Some(Fault::LoseAnswer) | None => {}
    }
    let token = request.header("x-shopify-access-token").unwrap_or_default();
    let scopes = match shop.tokens.get(token) {
        Some(t) if t.expires.is_none_or(|at| at > Instant::now()) => t.scopes.clone(),
        _ => {
            return error_body(
                401,
                "[API] Invalid API key or access token (unrecognized login or wrong password)",
            );
        }
    };
    if let Some(status) = shop.unavailable {
        return error_body(
            status,
            if status == 402 { "Unavailable Shop" } else { "This shop is unavailable" },
        );
    }
    let Some(query) = body.get("query").and_then(Value::as_str) else {
        return Response::json(400, &json!({"errors": {"query": "Required parameter missing or invalid"}}));
    };
    let operation_name = body.get("operationName").and_then(Value::as_str).filter(|n| !n.is_empty());
    let variables = logged.variables.as_object().cloned().unwrap_or_default();
    let prepared = match graphql::prepare(query, operation_name) {
        Ok(p) => p,
        Err(errors) => return Response::json(200, &json!({"errors": errors})),
    };
    for (parent, field) in graphql::fields_used(&prepared) {
        let needed = scopes_for(&parent, &field);
        if !needed.is_empty() && !needed.iter().any(|s| scopes.iter().any(|have| have == s)) {
            let message =
                format!("Access denied for {field} field. Required access: `{}` access scope.", needed[0]);
            return Response::json(
                200,
                &json!({"data": null, "errors": [{"message": message, "path": [field],
                        "extensions": {"code": "ACCESS_DENIED", "documentation": "https://shopify.dev/api/usage/access-scopes",
                                       "requiredAccess": format!("`{}` access scope.", needed[0])}}]}),
            );
        }
    }
    let requested = match graphql::requested_cost(&prepared, &variables) {
        Ok(cost) => cost,
        Err(message) => return Response::json(200, &json!({"errors": [error(message, None)]})),
    };
    logged.requested_cost = Some(requested);
    if requested > MAX_COST {
        return Response::json(
            200,
            &json!({"errors": [error(format!("Query cost is {requested}, which exceeds the single query max cost limit ({MAX_COST})."), Some("MAX_COST_EXCEEDED"))],
                    "extensions": {"cost": {"requestedQueryCost": requested, "actualQueryCost": null, "throttleStatus": shop.bucket.status()}}}),
        );
    }
    shop.bucket.refill();
    if shop.bucket.available < f64::from(requested) {
        logged.throttled = true;
        return Response::json(
            200,
            &json!({"errors": [error("Throttled", Some("THROTTLED"))],
                    "extensions": {"cost": {"requestedQueryCost": requested, "actualQueryCost": null, "throttleStatus": shop.bucket.status()}}}),
        );
    }
    let key = graphql::idempotency_key(&prepared, &variables);
    if prepared.operation().is_mutation()
        && key.is_none()
        && graphql::fields_used(&prepared)
            .iter()
            .any(|(p, f)| p == "Mutation" && f == "inventorySetQuantities")
    {
        return Response::json(
            200,
            &json!({"errors": [error("The @idempotent directive is required for this mutation.", Some("BAD_REQUEST"))]}),
        );
    }
    let (data, errors) = execute(shop, &prepared, &variables, key, &scopes);
    let actual = data.as_ref().map_or(0, |d| graphql::actual_cost(&prepared, &variables, d));
    logged.actual_cost = Some(actual);
    shop.bucket.available -= f64::from(actual);
    let mut answer = Map::new();
    answer.insert("data".into(), data.unwrap_or(Value::Null));
    if !errors.is_empty() {
        answer.insert("errors".into(), Value::Array(errors));
    }
    answer.insert(
        "extensions".into(),
        json!({"cost": {"requestedQueryCost": requested, "actualQueryCost": actual, "throttleStatus": shop.bucket.status()}}),
    );
    if fault == Some(Fault::LoseAnswer) {
        return error_body(502, "Bad Gateway");
    }
    Response::json(200, &Value::Object(answer))
}
