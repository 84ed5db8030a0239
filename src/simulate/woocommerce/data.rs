//! The simulated store's catalogue and orders: products made on demand for the SKUs orders
//! carry, generated orders, and an order written as WooCommerce's REST API writes it (money
//! as text, dates in UTC with no zone).

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::macros::format_description;

use super::{CITIES, FIRST, LAST, Line, Order, Product, Rng, Store};

/// WooCommerce's dates: no zone (the `_gmt` fields are UTC).
pub(super) const WC_DATE: &[time::format_description::BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");

impl Store {
    pub(super) fn insert_product(&mut self, product: Product) {
        self.skus.entry(product.sku.clone()).or_default().push(product.id);
        self.products.insert(product.id, product);
    }

    /// A simple product with this SKU and stock level (`None`: stock not managed).
    pub(super) fn add_simple(&mut self, sku: &str, level: Option<i64>) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        let product = Product {
            id,
            parent_id: 0,
            kind: "simple",
            sku: sku.into(),
            manage_stock: level.is_some(),
            stock: level,
            refuse: false,
        };
        self.insert_product(product);
        id
    }

    pub(super) fn product_for(&mut self, sku: &str) -> i64 {
        if let Some(p) = self.skus.get(sku).and_then(|ids| self.products.get(ids.first()?)) {
            return if p.parent_id != 0 { p.parent_id } else { p.id };
        }
        self.add_simple(sku, Some(0))
    }

    pub(super) fn add_order(&mut self, seed: u64, at: i64) -> i64 {
        let mut rng = Rng::new(seed);
        self.next_id += 1;
        let id = self.next_id;
        let count = 1 + rng.below(3) as usize;
        let lines = (0..count)
            .map(|line| {
                let n = rng.below(200);
                let sku = format!("WOO-{n:04}");
                let product_id = self.product_for(&sku);
                let quantity = 1 + rng.below(3) as i64;
                let price = 500 + rng.below(5_000) as i64;
                Line {
                    id: id * 10 + line as i64,
                    product_id,
                    variation_id: 0,
                    name: format!("Product {n} &ndash; Blue"),
                    sku: Some(sku),
                    quantity,
                    subtotal: price * quantity,
                    total: price * quantity,
                    tax: price * quantity / 10,
                }
            })
            .collect();
        let order = Order {
            id,
            parent_id: 0,
            status: "processing".into(),
            created_ms: at - 1000,
            modified_ms: at,
            customer_id: if rng.below(4) == 0 { 0 } else { 1 + rng.below(5000) as i64 },
            first_name: FIRST[rng.below(8) as usize].to_string(),
            last_name: LAST[rng.below(8) as usize].to_string(),
            email: format!("buyer{}@example.com", rng.below(100_000)),
            city: CITIES[rng.below(6) as usize].to_string(),
            lines,
            coupons: if rng.below(3) == 0 { vec!["SPRING10".into()] } else { Vec::new() },
        };
        self.orders.insert(id, order);
        id
    }
}

pub(super) fn wc_date(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(WC_DATE)
        .unwrap_or_default()
}

fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

impl Order {
    pub(super) fn json(&self) -> Value {
        let shipping = json!({"first_name": self.first_name, "last_name": self.last_name, "company": "",
            "address_1": "1 Main Street", "address_2": "", "city": self.city, "state": "TX", "postcode": "78701",
            "country": "US", "phone": ""});
        let mut billing = shipping.clone();
        billing["email"] = json!(self.email);
        billing["phone"] = json!("555-0100");
        let tax: i64 = self.lines.iter().map(|l| l.tax).sum();
        let lines: Vec<Value> = self
            .lines
            .iter()
            .map(|l| {
                json!({"id": l.id, "name": l.name, "product_id": l.product_id, "variation_id": l.variation_id,
                       "quantity": l.quantity, "tax_class": "", "subtotal": money(l.subtotal), "subtotal_tax": money(l.tax),
                       "total": money(l.total), "total_tax": money(l.tax), "sku": l.sku,
                       "price": l.total as f64 / 100.0 / l.quantity.max(1) as f64})
            })
            .collect();
        let coupons: Vec<Value> =
            self.coupons.iter().map(|c| json!({"id": 1, "code": c, "discount": "0.00"})).collect();
        json!({
            "id": self.id, "parent_id": self.parent_id, "number": self.id.to_string(), "status": self.status,
            "currency": "USD", "created_via": "checkout", "date_created_gmt": wc_date(self.created_ms),
            "date_modified_gmt": wc_date(self.modified_ms),
            "date_paid_gmt": if self.status == "pending" { Value::Null } else { json!(wc_date(self.created_ms)) },
            "discount_total": "0.00", "shipping_total": "4.50", "shipping_tax": "0.00", "total_tax": money(tax),
            "customer_id": self.customer_id, "customer_note": "", "billing": billing, "shipping": shipping,
            "payment_method": "stripe", "payment_method_title": "Credit card", "line_items": lines,
            "shipping_lines": [{"id": self.id * 10 + 9, "method_title": "Flat rate", "method_id": "flat_rate", "total": "4.50", "total_tax": "0.00"}],
            "coupon_lines": coupons,
        })
    }
}
