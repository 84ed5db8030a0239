//! The mix: what each task asks for, with what weight, and what it checks in the answers.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    OrdersPage,
    OrderGet,
    Session,
    ShipmentsPage,
    EntityGet,
    CustomerWrite,
    ProductWrite,
    OrderImport,
    ShipmentImport,
}

pub(crate) const KINDS: [Kind; 9] = [
    Kind::OrdersPage,
    Kind::OrderGet,
    Kind::Session,
    Kind::ShipmentsPage,
    Kind::EntityGet,
    Kind::CustomerWrite,
    Kind::ProductWrite,
    Kind::OrderImport,
    Kind::ShipmentImport,
];

impl Kind {
    /// Share of the requests, in percent (they add up to 100).
    pub(crate) fn weight(self) -> u32 {
        match self {
            Kind::OrdersPage | Kind::OrderGet => 20,
            Kind::Session | Kind::ShipmentsPage | Kind::EntityGet | Kind::OrderImport => 10,
            Kind::CustomerWrite => 8,
            Kind::ProductWrite => 7,
            Kind::ShipmentImport => 5,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::OrdersPage => "GET /orders page mode, filters, sorts",
            Kind::OrderGet => "GET /orders/{id}",
            Kind::Session => "session walk /orders, /shipments",
            Kind::ShipmentsPage => "GET /shipments page mode, filters",
            Kind::EntityGet => "GET customer/store/warehouse/product",
            Kind::CustomerWrite => "POST, PATCH /customers",
            Kind::ProductWrite => "POST, PATCH /products",
            Kind::OrderImport => "POST /import/orders (new, update)",
            Kind::ShipmentImport => "POST /import/shipments",
        }
    }

    pub(crate) fn is_write(self) -> bool {
        matches!(self, Kind::CustomerWrite | Kind::ProductWrite | Kind::OrderImport | Kind::ShipmentImport)
    }

    pub(crate) fn index(self) -> usize {
        KINDS.iter().position(|&k| k == self).unwrap_or(0)
    }
}

pub(crate) const FULFILLMENT_STATES: [&str; 4] =
    ["shipped", "partially_shipped", "pending_shipment", "cancelled"];

pub(crate) fn one<'a, T>(rng: &mut StdRng, list: &'a [T]) -> &'a T {
    &list[rng.random_range(0..list.len())]
}

/// What to do with a successful answer.
pub(crate) enum Then {
    Nothing,
    /// `GET /orders/{id}`: the document of that order; keep it for a shipment.
    Order(i64),
    /// A listing session's page on `orders` or `shipments`.
    Session(&'static str),
    /// `201 {"id"}` of a customer or a product.
    NewCustomer,
    NewProduct,
    /// `{"created", "updated"}` of an import of one record.
    Imported {
        what: Imported,
        created: bool,
    },
    /// A listing that must find exactly one record.
    OneMatch,
}

#[derive(Clone, Copy)]
pub(crate) enum Imported {
    Order { store: i64 },
    Shipment,
}

pub(crate) struct Request {
    pub(crate) kind: Kind,
    pub(crate) method: &'static str,
    pub(crate) path: String,
    pub(crate) body: Option<String>,
    pub(crate) expect: u16,
    pub(crate) then: Then,
}

impl Request {
    pub(crate) fn get(kind: Kind, path: String, then: Then) -> Request {
        Request { kind, method: "GET", path, body: None, expect: 200, then }
    }

    pub(crate) fn send(
        kind: Kind,
        method: &'static str,
        path: String,
        body: &Value,
        expect: u16,
        then: Then,
    ) -> Request {
        Request { kind, method, path, body: Some(body.to_string()), expect, then }
    }

    pub(crate) fn bytes(&self, world: &World) -> Vec<u8> {
        let mut r = format!(
            "{} {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n",
            self.method, self.path, world.port, world.auth
        );
        match &self.body {
            Some(body) => r.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )),
            None => r.push_str("\r\n"),
        }
        r.into_bytes()
    }
}

/// What one task remembers between its requests.
pub(crate) struct Task {
    pub(crate) id: usize,
    pub(crate) rng: StdRng,
    /// Grows with each name the task makes, so names are unique in the run.
    pub(crate) n: u64,
    pub(crate) customers: Vec<i64>,
    pub(crate) products: Vec<i64>,
    /// (store id, external id) of the orders it imported.
    pub(crate) imported: Vec<(i64, String)>,
    /// (order id, store id, an item id) of orders it read, for shipments.
    pub(crate) shippable: Vec<(i64, i64, i64)>,
    /// (resource, session id) of the listing session it walks.
    pub(crate) session: Option<(&'static str, String)>,
    pub(crate) written: Written,
}

/// The writes the server acknowledged.
#[derive(Default, Clone, Copy)]
pub(crate) struct Written {
    pub(crate) customers: u64,
    pub(crate) products: u64,
    pub(crate) orders_created: u64,
    pub(crate) orders_updated: u64,
    pub(crate) shipments: u64,
}

impl Written {
    pub(crate) fn add(&mut self, o: Written) {
        self.customers += o.customers;
        self.products += o.products;
        self.orders_created += o.orders_created;
        self.orders_updated += o.orders_updated;
        self.shipments += o.shipments;
    }
}

pub(crate) fn now_iso() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "2026-01-01T00:00:00Z".to_string())
}

impl Task {
    pub(crate) fn next_name(&mut self) -> String {
        self.n += 1;
        format!("{}-{}", self.id, self.n)
    }

    pub(crate) fn pick(&mut self) -> Kind {
        let mut r = self.rng.random_range(0..100);
        let mut kind = Kind::OrderGet;
        for k in KINDS {
            if r < k.weight() {
                kind = k;
                break;
            }
            r -= k.weight();
        }
        // A shipment needs an order read first.
        if kind == Kind::ShipmentImport && self.shippable.is_empty() { Kind::OrderGet } else { kind }
    }

    pub(crate) fn next(&mut self, w: &World) -> Request {
        let kind = self.pick();
        let rng = &mut self.rng;
        match kind {
            Kind::OrdersPage => {
                let limit = *one(rng, &[20, 20, 50, 100]);
                let page = rng.random_range(1..=10);
                let store = one(rng, &w.stores).0;
                let filter = match rng.random_range(0..5) {
                    0 => String::new(),
                    1 => format!("&store_id={store}"),
                    2 => format!("&state={}", one(rng, &FULFILLMENT_STATES)),
                    3 => format!("&store_id={store}&ordered_at_min=30+days+ago&sort=-ordered_at"),
                    _ => format!("&sort={}", one(rng, &["-id", "ordered_at", "-created_at", "external_id"])),
                };
                Request::get(kind, format!("/orders?page={page}&limit={limit}{filter}"), Then::Nothing)
            }
            Kind::OrderGet => {
                let id = rng.random_range(1..=w.orders) as i64;
                Request::get(kind, format!("/orders/{id}"), Then::Order(id))
            }
            Kind::Session => match &self.session {
                Some((resource, id)) if rng.random_range(0..50) != 0 => {
                    Request::get(kind, format!("/{resource}?session_id={id}"), Then::Session(resource))
                }
                _ => {
                    let (resource, limit) =
                        if rng.random_bool(0.7) { ("orders", 20) } else { ("shipments", 50) };
                    let filter = if rng.random_bool(0.5) {
                        format!("&store_id={}", one(rng, &w.stores).0)
                    } else {
                        String::new()
                    };
                    Request::get(kind, format!("/{resource}?limit={limit}{filter}"), Then::Session(resource))
                }
            },
            Kind::ShipmentsPage => {
                let limit = *one(rng, &[20, 50]);
                let page = rng.random_range(1..=5);
                let filter = match rng.random_range(0..5) {
                    0 => format!("&state={}", one(rng, &orderbridge::shipments::STATES)),
                    1 => format!("&warehouse_id={}", one(rng, &w.warehouses).0),
                    2 => format!("&store_id={}&sort=-shipped_at", one(rng, &w.stores).0),
                    3 => format!("&customer_id={}&sort=tracking_number", one(rng, &w.customers)),
                    _ => "&sort=-created_at".to_string(),
                };
                Request::get(kind, format!("/shipments?page={page}&limit={limit}{filter}"), Then::Nothing)
            }
            Kind::EntityGet => {
                let path = match rng.random_range(0..6) {
                    0 => match self.customers.last() {
                        Some(id) if rng.random_bool(0.5) => format!("/customers/{id}"),
                        _ => format!("/customers/{}", one(rng, &w.customers)),
                    },
                    1 => format!("/stores/{}", one(rng, &w.stores).0),
                    2 => format!("/warehouses/{}", one(rng, &w.warehouses).0),
                    3 => match self.products.last() {
                        Some(id) if rng.random_bool(0.5) => format!("/products/{id}"),
                        _ => format!("/products/{}", one(rng, &w.products)),
                    },
                    4 => "/connections".to_string(),
                    _ => match self.imported.last() {
                        Some((store, external)) => {
                            let path = format!("/orders?page=1&store_id={store}&external_id={external}");
                            return Request::get(kind, path, Then::OneMatch);
                        }
                        None => format!("/customers/{}", one(rng, &w.customers)),
                    },
                };
                Request::get(kind, path, Then::Nothing)
            }
            Kind::CustomerWrite => {
                if self.customers.is_empty() || self.rng.random_range(0..10) == 0 {
                    let name = self.next_name();
                    let body = json!({"company_name": format!("Soak {name}"), "city": "Soakville",
                                      "state": "TX", "zipcode": "78701", "country": "US"});
                    Request::send(kind, "POST", "/customers".into(), &body, 201, Then::NewCustomer)
                } else {
                    let id = *one(&mut self.rng, &self.customers);
                    self.n += 1;
                    let body = json!({"street1": format!("{} Soak St", self.n), "zipcode": "78702"});
                    Request::send(kind, "PATCH", format!("/customers/{id}"), &body, 204, Then::Nothing)
                }
            }
            Kind::ProductWrite => {
                if self.products.is_empty() || self.rng.random_range(0..4) == 0 {
                    let customer = match self.customers.last() {
                        Some(&id) => id,
                        None => *one(&mut self.rng, &w.customers),
                    };
                    let name = self.next_name();
                    let body = json!({"customer_id": customer, "sku": format!("SOAK-{name}")});
                    Request::send(kind, "POST", "/products".into(), &body, 201, Then::NewProduct)
                } else {
                    let id = *one(&mut self.rng, &self.products);
                    self.n += 1;
                    let body = json!({"variant_of": format!("soak-{}", self.n)});
                    Request::send(kind, "PATCH", format!("/products/{id}"), &body, 204, Then::Nothing)
                }
            }
            Kind::OrderImport => {
                let (store, external, created) = if self.imported.is_empty() || self.rng.random_bool(0.7) {
                    let store = one(&mut self.rng, &w.stores).0;
                    (store, format!("SOAK-{}", self.next_name()), true)
                } else {
                    let (store, external) = one(&mut self.rng, &self.imported).clone();
                    (store, external, false)
                };
                self.n += 1;
                let items: Vec<Value> = (1..=self.rng.random_range(1..=3))
                    .map(|line| {
                        json!({"sku": format!("SOAK-SKU-{line}"), "name": format!("Soak item {line}"),
                               "quantity": self.rng.random_range(1..=4), "unit_price": "12.50",
                               "weight": "0.40", "external_order_item_id": format!("{external}-{line}")})
                    })
                    .collect();
                let order = json!({
                    "store_id": store, "external_id": external, "external_display_id": format!("#{external}"),
                    "customer_email": format!("soak{}@example.com", self.id), "ordered_at": now_iso(),
                    "currency_code": "USD", "shipping_amount": "5.00", "tax_amount": "1.25",
                    "notes": format!("soak revision {}", self.n), "fulfillment_state": "new",
                    "shipping_carrier_name": "UPS", "shipping_carrier_service_level": "Ground",
                    "shipping_address": {"first_name": "Sam", "last_name": "Soak", "street1": "1 Main St",
                        "city": "Austin", "region": "TX", "postal_code": "78701", "country": "US"},
                    "order_items": items,
                });
                let then = Then::Imported { what: Imported::Order { store }, created };
                // An update keeps the external id: remember a new one only.
                if created {
                    self.imported.push((store, external));
                }
                Request::send(kind, "POST", "/import/orders".into(), &json!([order]), 200, then)
            }
            Kind::ShipmentImport => {
                let (order, store, item) = self.shippable.pop().unwrap_or((1, 1, 1));
                let warehouse = w.customer_of_store(store).and_then(|c| w.warehouse_of(c)).unwrap_or(1);
                let name = self.next_name();
                let shipment = json!({
                    "order_id": order, "tracking_number": format!("SOAK-{name}"), "warehouse_id": warehouse,
                    "carrier_name": "UPS", "service_level": "Ground", "shipped_at": now_iso(), "weight": "1.5",
                    "order_items": [{"id": item}],
                });
                let then = Then::Imported { what: Imported::Shipment, created: true };
                Request::send(kind, "POST", "/import/shipments".into(), &json!([shipment]), 200, then)
            }
        }
    }

    /// Checks a 2xx answer's body and learns from it; `Err` describes a wrong body.
    pub(crate) fn learn(&mut self, then: &Then, body: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(body).map_err(|_| "a body that is not UTF-8".to_string())?;
        match then {
            Then::Nothing => {
                if !text.is_empty() && !text.starts_with(['{', '[']) {
                    return Err("a body that is not JSON".into());
                }
            }
            Then::Order(id) => {
                if self.shippable.len() < 8 {
                    let v: Value = serde_json::from_str(text).map_err(|e| format!("order JSON: {e}"))?;
                    let order = &v["order"];
                    if order["id"].as_i64() != Some(*id) {
                        return Err(format!("asked for order {id}, got {}", order["id"]));
                    }
                    let store = order["store_id"].as_i64().ok_or("an order without store_id")?;
                    let item = order["order_items"][0]["id"].as_i64();
                    if let Some(item) = item {
                        self.shippable.push((*id, store, item));
                    }
                } else if !text.contains(&format!("\"id\":{id},")) {
                    return Err(format!("asked for order {id}, its id is not in the body"));
                }
            }
            Then::Session(resource) => {
                let at = text.rfind("\"session_id\":\"").ok_or("a session page without session_id")?;
                let rest = &text[at + 14..];
                let id = &rest[..rest.find('"').ok_or("an unterminated session_id")?];
                if !text.starts_with(&format!("{{\"{resource}\":[")) {
                    return Err(format!("a session page without {resource}"));
                }
                // Past the end the page is empty: open another session next time.
                let ended = text.starts_with(&format!("{{\"{resource}\":[]"));
                self.session = if ended { None } else { Some((*resource, id.to_string())) };
            }
            Then::NewCustomer | Then::NewProduct => {
                let v: Value = serde_json::from_str(text).map_err(|e| format!("create answer: {e}"))?;
                let id = v["id"].as_i64().ok_or_else(|| format!("a create answer without id: {text}"))?;
                if matches!(then, Then::NewCustomer) {
                    self.customers.push(id);
                    self.written.customers += 1;
                } else {
                    self.products.push(id);
                    self.written.products += 1;
                }
            }
            Then::Imported { what, created } => {
                let v: Value = serde_json::from_str(text).map_err(|e| format!("import answer: {e}"))?;
                let (c, u) = (v["created"].as_u64(), v["updated"].as_u64());
                let want = if *created { (Some(1), Some(0)) } else { (Some(0), Some(1)) };
                if (c, u) != want {
                    return Err(format!("an import of one record answered {text}"));
                }
                match (what, created) {
                    (Imported::Order { .. }, true) => self.written.orders_created += 1,
                    (Imported::Order { .. }, false) => self.written.orders_updated += 1,
                    (Imported::Shipment, _) => self.written.shipments += 1,
                }
            }
            Then::OneMatch => {
                if !text.contains("\"total_count\":1,") {
                    return Err(format!("looked up one order by external_id: {}", prefix(text, 200)));
                }
            }
        }
        Ok(())
    }

    /// The import of a new order failed: it may not exist, so do not update or look it up.
    pub(crate) fn forget(&mut self, then: &Then) {
        if let Then::Imported { what: Imported::Order { store }, created: true } = then
            && self.imported.last().is_some_and(|(s, _)| s == store)
        {
            self.imported.pop();
        }
    }
}

pub(crate) fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
