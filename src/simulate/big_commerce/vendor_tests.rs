//! The BigCommerce client and this simulator held to BigCommerce's own OpenAPI files
//! (`../shared/vendor/bigcommerce/`, see its README): the client is driven through the
//! simulator over every operation it uses, and every request and answer that crossed the
//! wire is checked against `orders.v2.oas2.yml` or `inventory.v3.yml`. Where the files
//! contradict themselves, [`exceptions`] says so, once, with the reason.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Simulator;
use crate::platforms::PlatformError;
use crate::platforms::big_commerce::client::BigCommerce;
use crate::platforms::retry::RetryPolicy;
use crate::platforms::store::{NoticeItem, Notified, ShipmentNotice};
use crate::simulate::openapi_check::{Description, Exchange, Patch};

const HASH: &str = "vendorcheck";
const TOKEN: &str = "vendor-check-token-0123";

/// Where BigCommerce's files are (`shared/vendor/bigcommerce`).
fn vendor_dir() -> PathBuf {
    crate::simulate::shared_files::shared("vendor/bigcommerce")
}

/// Every place where BigCommerce's files contradict themselves or the platform they
/// describe, as read by these tests: (file, patch). Each patch names what the file says
/// there, so a corrected file makes its patch fail and get removed.
fn exceptions() -> Vec<(&'static str, Patch)> {
    let link_required = |schema: &'static str| Patch {
        pointer: match schema {
            "orderConsignments_Resource" => "/components/schemas/orderConsignments_Resource/required",
            _ => "/components/schemas/products_Resource/required",
        },
        was: None,
        now: Some(json!(["url", "resource"])),
        why: "`consignments` is oneOf a link (orderConsignments_Resource) and the consignments \
              (orderConsignment_Get), and a consignment's `line_items` oneOf links \
              (products_Resource) and order products; no branch requires anything, so any object \
              matches both and oneOf can never hold. Each branch requires the members all its \
              examples show.",
    };
    let id_list = |pointer: &'static str, name: &'static str, description: &'static str| {
        let param = |schema: Value, explode: Option<bool>| {
            let mut p = json!({"in": "query", "name": name, "description": description, "required": false,
                               "schema": schema});
            if let Some(explode) = explode {
                p["style"] = json!("form");
                p["explode"] = json!(explode);
            }
            p
        };
        Patch {
            pointer,
            was: Some(param(json!({"type": "integer"}), None)),
            now: Some(param(json!({"type": "array", "items": {"type": "integer"}}), Some(false))),
            why: "described as a comma-separated list of ids, typed as one integer",
        }
    };
    vec![
        (
            "inventory.v3.yml",
            id_list(
                "/components/parameters/LocationIdsParam",
                "location_id:in",
                "Comma separated list of `location_id`.",
            ),
        ),
        (
            "inventory.v3.yml",
            id_list(
                "/components/parameters/VariantIdFilterParam",
                "variant_id:in",
                "List of `variant_id` separated by comma.",
            ),
        ),
        (
            "inventory.v3.yml",
            id_list(
                "/components/parameters/ProductIdFilterParam",
                "product_id:in",
                "List of `product_id` separated by comma.",
            ),
        ),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/components/parameters/sort/schema",
                was: Some(json!({"type": "string", "enum": ["id", "customer_id", "date_created",
                    "date_modified", "status_id", "channel_id", "external_id"]})),
                now: Some(json!({"type": "string", "pattern":
                    "^(id|customer_id|date_created|date_modified|status_id|channel_id|external_id)(:asc|:desc)?$"})),
                why: "the parameter's own description documents a direction suffix \
                      (`sort=date_created:desc`) that its enum leaves out",
            },
        ),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/paths/~1orders~1{order_id}~1products/get/parameters",
                was: Some(json!([{"$ref": "#/components/parameters/ContentType"},
                    {"$ref": "#/components/parameters/page"}, {"$ref": "#/components/parameters/limit"}])),
                now: Some(
                    json!([{"$ref": "#/components/parameters/page"}, {"$ref": "#/components/parameters/limit"}]),
                ),
                why: "`Content-Type` (\"the MIME type of the request body\") is required on a GET \
                      that has no body; no other GET of the file asks for it",
            },
        ),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/paths/~1orders/get/responses/204",
                was: None,
                now: Some(json!({"description": "No Content (no order matches)", "content": {}})),
                why: "BigCommerce answers an empty v2 list with 204 No Content, as the file \
                      declares for getOrderShipments and CONTRACT §11 relies on; getOrders \
                      declares only 200",
            },
        ),
        ("orders.v2.oas2.yml", link_required("orderConsignments_Resource")),
        ("orders.v2.oas2.yml", link_required("products_Resource")),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/components/schemas/orderConsignment_Get/required",
                was: None,
                now: Some(json!(["pickups", "shipping", "downloads", "email"])),
                why: "the other branch of the `consignments` oneOf above: every example of \
                      orderConsignment_Get shows all four members",
            },
        ),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/components/schemas/orderShipment_Post/required",
                was: None,
                now: Some(json!(["order_address_id", "items"])),
                why: "createOrderShipments' text lists order_address_id and items as required \
                      fields; its schema requires nothing",
            },
        ),
        (
            "orders.v2.oas2.yml",
            Patch {
                pointer: "/components/schemas/orderShipment_Post/properties/items/items/required",
                was: None,
                now: Some(json!(["order_product_id", "quantity"])),
                why: "the items' description calls order_product_id and quantity required; the \
                      schema requires neither",
            },
        ),
    ]
}

/// BigCommerce's two descriptions, with [`exceptions`] applied.
struct Vendor {
    orders: Description,
    inventory: Description,
}

impl Vendor {
    fn load() -> Vendor {
        let dir = vendor_dir();
        let all = exceptions();
        let of = |file: &str| -> Vec<Patch> {
            all.iter().filter(|(f, _)| *f == file).map(|(_, p)| p.clone()).collect()
        };
        let load =
            |file: &str| Description::load(&dir.join(file), &of(file)).unwrap_or_else(|e| panic!("{e}"));
        Vendor { orders: load("orders.v2.oas2.yml"), inventory: load("inventory.v3.yml") }
    }

    /// What the right description finds wrong with an exchange (v2 or v3 by its path).
    fn check(&self, exchange: &Exchange) -> Vec<String> {
        if exchange.path.contains("/v3/") {
            self.inventory.check(exchange)
        } else {
            self.orders.check(exchange)
        }
    }

    /// Checks every exchange; panics listing all that is wrong.
    fn hold(&self, exchanges: &[Exchange]) {
        let wrong: Vec<String> = exchanges.iter().flat_map(|e| self.check(e)).collect();
        assert!(wrong.is_empty(), "against BigCommerce's description:\n{}", wrong.join("\n"));
    }
}

fn adapter(location_id: i64) -> Map<String, Value> {
    let Value::Object(map) = json!({"access_token": TOKEN, "store_hash": HASH, "location_id": location_id})
    else {
        unreachable!()
    };
    map
}

fn client(sim: &Simulator, location_id: i64) -> BigCommerce {
    let policy = RetryPolicy {
        tries: 1,
        base: Duration::from_millis(10),
        request_timeout: Duration::from_secs(10),
        longest_wait: Duration::from_secs(10),
    };
    let settings = crate::platforms::Settings { bigcommerce_api_base: sim.base_url(), ..Default::default() };
    BigCommerce::new(&settings, &adapter(location_id), Some(policy)).unwrap()
}

async fn simulator(orders: usize) -> Simulator {
    let sim = Simulator::start().await;
    sim.add_store(HASH, TOKEN);
    sim.add_orders(HASH, orders, 5);
    sim
}

/// A request as BigCommerce's clients send it (the token, `Accept`), for the reads the
/// client itself does not make.
async fn raw(
    sim: &Simulator,
    method: reqwest::Method,
    path_and_query: &str,
    body: Option<Value>,
) -> reqwest::StatusCode {
    let url = format!("{}/stores/{HASH}{path_and_query}", sim.base_url());
    let mut request = crate::platforms::http::client()
        .clone()
        .request(method, url)
        .header("X-Auth-Token", TOKEN)
        .header("Accept", "application/json");
    if let Some(body) = body {
        request = request.header("Content-Type", "application/json").body(body.to_string());
    }
    request.send().await.unwrap().status()
}

fn notice(order: &str, address: Option<String>, line: &str, tracking: &str, carrier: &str) -> ShipmentNotice {
    let items = vec![NoticeItem { line: Some(line.to_string()), sku: None, quantity: 1 }];
    ShipmentNotice {
        address_id: address,
        carrier: Some(carrier.to_string()),
        shipping_method: Some("Ground".into()),
        ..ShipmentNotice::new(order, tracking, items)
    }
}

/// The `operationId`s the exchanges reached.
fn operations(vendor: &Vendor, exchanges: &[Exchange]) -> std::collections::BTreeSet<String> {
    let id = |e: &Exchange| {
        let d = if e.path.contains("/v3/") { &vendor.inventory } else { &vendor.orders };
        d.operation_id(e)
    };
    exchanges.iter().filter_map(id).collect()
}

#[tokio::test]
async fn every_request_of_the_client_and_every_answer_of_the_simulator_follow_bigcommerces_description() {
    let vendor = Vendor::load();
    let sim = simulator(3).await;
    let bc = client(&sim, 1);

    // The pull: one list request carries every order's consignments, lines included.
    let listed = bc.orders_page(None, 1).await.unwrap();
    assert_eq!(listed.len(), 3);
    let mut pulled = Vec::new();
    for order in &listed {
        pulled.push(bc.order_record(order).await.unwrap());
    }
    let first = sim.take_exchanges(HASH);
    assert_eq!(
        first.len(),
        1,
        "the pull is one request: {:?}",
        first.iter().map(Exchange::line).collect::<Vec<_>>()
    );
    let latest = listed.iter().map(|o| o.cursor_ms).max().unwrap();
    assert!(bc.orders_page(Some(latest + 1000), 1).await.unwrap().is_empty(), "nothing after the last");

    // An API that drops `include`: each order falls back to its products and addresses.
    sim.ignore_include(HASH, true);
    let bare = bc.orders_page(None, 1).await.unwrap();
    let mut fallback = Vec::new();
    for order in &bare {
        fallback.push(bc.order_record(order).await.unwrap());
    }
    sim.ignore_include(HASH, false);
    for (with, without) in pulled.iter().zip(&fallback) {
        assert_eq!(with.record, without.record, "the same order either way");
        assert_eq!(with.address_id, without.address_id);
    }

    // Notify: look first (none yet: 204), post; then again, which finds it.
    let order = &pulled[0];
    let external = order.record["external_id"].as_str().unwrap();
    let line = order.record["order_items"][0]["external_order_item_id"].as_str().unwrap();
    let sent = notice(external, order.address_id.clone(), line, "1Z999AA10123456784", "Royal Mail");
    assert_eq!(bc.notify(&sent).await.unwrap(), Notified::Posted);
    assert_eq!(bc.notify(&sent).await.unwrap(), Notified::AlreadyThere);

    // Stock, then stock at a location the store does not have (422, problem+json).
    assert_eq!(bc.set_stock(&[("SKU-A".into(), 4), ("SKU-B".into(), 0)]).await.unwrap(), 1);
    let refused = client(&sim, 99).set_stock(&[("SKU-A".into(), 1)]).await.unwrap_err();
    assert!(matches!(refused, PlatformError::Rejected { status: 422, .. }), "{refused:?}");

    // The reads the client does not make but the vendor offers, and the list's other forms.
    let order_path = format!("/v2/orders/{external}");
    for (path, status) in [
        (format!("{order_path}?include=consignments.line_items&consignment_structure=object"), 200),
        (order_path.clone(), 200),
        ("/v2/orders/999999".to_string(), 404),
        ("/v2/orders?sort=id:desc&status_id=11&limit=1&page=2".to_string(), 200),
        ("/v2/orders?include=consignments&consignment_structure=object&min_date_created=2001-01-01T00:00:00Z".to_string(), 200),
        ("/v2/orders?status_id=5".to_string(), 204),
        ("/v3/inventory/items?sku:in=SKU-A,SKU-B&location_id:in=1,2&limit=1".to_string(), 200),
        ("/v3/inventory/locations/1/items?sku:in=SKU-A".to_string(), 200),
        ("/v3/inventory/locations/7/items".to_string(), 404),
    ] {
        assert_eq!(raw(&sim, reqwest::Method::GET, &path, None).await.as_u16(), status, "{path}");
    }

    let mut exchanges = first;
    exchanges.extend(sim.take_exchanges(HASH));
    vendor.hold(&exchanges);
    let reached = operations(&vendor, &exchanges);
    for op in [
        "getOrders",
        "getOrder",
        "getOrderProducts",
        "getOrderShippingAddresses",
        "getOrderShipments",
        "createOrderShipments",
        "put-absolute-adjustment",
        "get-inventory-items",
        "get-location-inventory-items",
    ] {
        assert!(reached.contains(op), "{op} was not exercised: {reached:?}");
    }
    let statuses: std::collections::BTreeSet<u16> = exchanges.iter().map(|e| e.status).collect();
    assert_eq!(statuses, [200, 201, 204, 404, 422].into(), "each declared answer was seen");
}

#[tokio::test]
async fn a_request_that_breaks_the_description_is_reported() {
    let vendor = Vendor::load();
    let sim = simulator(1).await;
    let url = |rest: &str| format!("{}/stores/{HASH}{rest}", sim.base_url());
    let http = crate::platforms::http::client().clone();
    let cases: [(reqwest::RequestBuilder, &str); 6] = [
        (
            http.get(url("/v2/orders?sort=modified"))
                .header("X-Auth-Token", TOKEN)
                .header("Accept", "application/json"),
            "query parameter sort=modified",
        ),
        (
            http.get(url("/v2/orders?include=products"))
                .header("X-Auth-Token", TOKEN)
                .header("Accept", "application/json"),
            "query parameter include=products",
        ),
        (
            http.put(url("/v3/inventory/adjustments/absolute"))
                .header("X-Auth-Token", TOKEN)
                .header("Accept", "application/json")
                .body(json!({"items": [{"location_id": 1, "sku": "SKU-A", "quantity": 1}]}).to_string()),
            "the required header parameter Content-Type is missing",
        ),
        (http.get(url("/v2/orders")).header("Accept", "application/json"), "no security requirement is met"),
        (
            http.get(url("/v2/orders?min_date_modified=2024-01-01&limit=ten"))
                .header("X-Auth-Token", TOKEN)
                .header("Accept", "application/json"),
            "query parameter limit=ten",
        ),
        (
            http.put(url("/v3/inventory/adjustments/absolute"))
                .header("X-Auth-Token", TOKEN)
                .header("Accept", "application/json")
                .header("Content-Type", "application/json")
                .body(json!({"items": [{"sku": "SKU-A", "quantity": 1}]}).to_string()),
            "request body does not fit its schema",
        ),
    ];
    for (request, expected) in cases {
        request.send().await.unwrap();
        let exchange = sim.take_exchanges(HASH).pop().unwrap();
        let found = vendor.check(&exchange);
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: wanted {expected:?} in {found:#?}",
            exchange.line()
        );
    }
}

#[tokio::test]
async fn an_answer_that_breaks_the_description_is_reported() {
    let vendor = Vendor::load();
    let sim = simulator(1).await;
    client(&sim, 1).orders_page(None, 1).await.unwrap();
    let good = sim.take_exchanges(HASH).pop().unwrap();
    assert_eq!(vendor.check(&good), Vec::<String>::new());
    let mut orders: Value = serde_json::from_slice(&good.answer_body).unwrap();
    orders[0]["id"] = json!("one hundred");
    orders[0]["consignments"]["shipping"][0]["line_items"][0]["quantity"] = json!("2");
    let mut bad = good.clone();
    bad.answer_body = orders.to_string().into_bytes();
    let found = vendor.check(&bad);
    assert!(found.iter().any(|f| f.contains("at \"/0/id\"") && f.contains("\"one hundred\"")), "{found:#?}");
    // A consignment's line is an order product, so its quantity is a whole number.
    assert!(found.iter().any(|f| f.contains("at \"/0/consignments")), "{found:#?}");
    let mut as_text = good;
    as_text.answer_headers = vec![("Content-Type".into(), "text/html".into())];
    assert!(vendor.check(&as_text).iter().any(|f| f.contains("\"text/html\" is not declared")));
}
