//! The demo data set's orders and shipments: realistic documents written in bulk through
//! the same writers as an import.

use super::*;

fn text(s: impl Into<String>) -> Scalar {
    Scalar::Text(s.into())
}

pub(super) fn seed_orders(
    conn: &mut Connection,
    rng: &mut StdRng,
    tenants: &[Tenant],
    opts: &Options,
    now: i64,
    progress: &mut dyn FnMut(u64),
) -> rusqlite::Result<(u64, u64)> {
    conn.set_prepared_statement_cache_capacity(64);
    let field = |name: &str| ORDER_FIELDS.iter().position(|(k, _)| *k == name).expect("order field");
    let item_field = |name: &str| ITEM_FIELDS.iter().position(|(k, _)| *k == name).expect("item field");
    let f = OrderFields {
        external_display_id: field("external_display_id"),
        external_billing_customer_id: field("external_billing_customer_id"),
        external_shipping_customer_id: field("external_shipping_customer_id"),
        customer_email: field("customer_email"),
        ordered_at: field("ordered_at"),
        invoice_number: field("invoice_number"),
        payment_type: field("payment_type"),
        shipping_carrier_name: field("shipping_carrier_name"),
        shipping_carrier_service_level: field("shipping_carrier_service_level"),
        signature_required: field("signature_required"),
        shipping_insurance: field("shipping_insurance"),
        gift_message: field("gift_message"),
        notes: field("notes"),
        shipping_amount: field("shipping_amount"),
        discount_amount: field("discount_amount"),
        tax_amount: field("tax_amount"),
        shipping_tax_amount: field("shipping_tax_amount"),
        discount_codes: field("discount_codes"),
        payment_date: field("payment_date"),
        external_tags: field("external_tags"),
        fulfillment_state: field("fulfillment_state"),
        fulfillment_transitioned_at: field("fulfillment_transitioned_at"),
        external_type: field("external_type"),
        fulfillment_warehouse_id: field("fulfillment_warehouse_id"),
        country_of_origin: field("country_of_origin"),
        currency_code: field("currency_code"),
        customer_service_email: field("customer_service_email"),
        lead_source: field("lead_source"),
        external_id: field("external_id"),
    };
    let item = ItemFields {
        name: item_field("name"),
        sku: item_field("sku"),
        upc: item_field("upc"),
        unit_price: item_field("unit_price"),
        unit_cost: item_field("unit_cost"),
        weight: item_field("weight"),
        external_order_item_id: item_field("external_order_item_id"),
        external_product_id: item_field("external_product_id"),
        tax_amount: item_field("tax_amount"),
        gift_wrap: item_field("gift_wrap"),
        color_description: item_field("color_description"),
        size_description: item_field("size_description"),
        product_type: item_field("product_type"),
        quantity: item_field("quantity"),
    };
    let start = now - 90 * DAY_MS;
    let span = 90 * DAY_MS;
    let mut shipments = 0u64;
    let mut external_item = 500_000u64;
    let mut done = 0u64;
    while done < opts.orders {
        let batch_end = (done + BATCH).min(opts.orders);
        let tx = conn.transaction()?;
        let mut orders = OrderWriter::new(&tx, now);
        orders.assume_new = true;
        let mut ships = ShipmentWriter::new(&tx, now);
        ships.assume_new = true;
        for n in done..batch_end {
            let tenant = &tenants[(n % 7 % 3) as usize];
            let (store_id, platform) = tenant.stores[rng.random_range(0..tenant.stores.len())];
            // Orders arrive roughly in time order over the last 90 days.
            let base = start + (span as f64 * (n as f64 + 0.5) / opts.orders as f64) as i64;
            let ordered_at = (base + rng.random_range(-3_600_000..3_600_000)).clamp(start, now - 60_000);
            let item_count = opts.items.map_or_else(|| rng.random_range(1..=5u32), |k| k.max(1));
            let mut values = vec![Scalar::Null; ORDER_FIELDS.len()];
            let number = 100_000 + n;
            // BigCommerce's order id, Sellbrite's sb_order_seq, Shopify's order number: numbers all.
            values[f.external_id] = text(number.to_string());
            values[f.external_display_id] = text(format!("#{number}"));
            let first = *pick(rng, &FIRST);
            let last = *pick(rng, &LAST);
            let shopper = rng.random_range(1_000..60_000u32);
            values[f.external_billing_customer_id] = text(shopper.to_string());
            values[f.external_shipping_customer_id] = text(shopper.to_string());
            values[f.customer_email] = text(format!(
                "{}.{}{}@example.com",
                first.to_lowercase(),
                last.to_lowercase(),
                shopper % 100
            ));
            values[f.ordered_at] = Scalar::Int(ordered_at);
            values[f.payment_date] = Scalar::Int(ordered_at + rng.random_range(0..120_000));
            values[f.invoice_number] = text(format!("INV-{number}"));
            values[f.payment_type] = text(*pick(rng, &["credit_card", "credit_card", "paypal", "apple_pay"]));
            let (carrier, levels) = pick(rng, &CARRIERS);
            values[f.shipping_carrier_name] = text(*carrier);
            values[f.shipping_carrier_service_level] = text(*pick(rng, levels));
            values[f.signature_required] = Scalar::Int(i64::from(rng.random_bool(0.1)));
            values[f.shipping_insurance] = Scalar::Int(i64::from(rng.random_bool(0.05)));
            if rng.random_bool(0.08) {
                values[f.gift_message] = text("Happy birthday! Enjoy.");
            }
            if rng.random_bool(0.05) {
                values[f.notes] = text("Please leave at the back door.");
            }
            values[f.external_type] = text(if platform == "sellbrite" { "marketplace" } else { "web" });
            values[f.lead_source] = text(*pick(rng, &["organic", "email", "ads", "referral"]));
            values[f.country_of_origin] = text("US");
            values[f.currency_code] = text("USD");
            values[f.customer_service_email] = text("support@example.com");
            let warehouse_id = tenant.warehouses[rng.random_range(0..tenant.warehouses.len())];
            values[f.fulfillment_warehouse_id] = Scalar::Int(warehouse_id);

            let mut items = Vec::with_capacity(item_count as usize);
            let mut subtotal = 0i64;
            let mut weight = 0i64;
            for _ in 0..item_count {
                let product = &tenant.products[rng.random_range(0..tenant.products.len())];
                let quantity = if rng.random_bool(0.8) { 1 } else { rng.random_range(2..=3) };
                let mut v = vec![Scalar::Null; ITEM_FIELDS.len()];
                v[item.name] = text(product.name.clone());
                v[item.sku] = text(product.sku.clone());
                v[item.upc] = text(format!("0{:011}", 40_000_000_000 + product.id * 7919));
                v[item.unit_price] = Scalar::Int(product.price);
                v[item.unit_cost] = Scalar::Int(product.price * 55 / 100);
                v[item.weight] = Scalar::Int(product.weight);
                external_item += 1;
                v[item.external_order_item_id] = text(external_item.to_string());
                v[item.external_product_id] = text(product.id.to_string());
                v[item.tax_amount] = Scalar::Int(product.price * quantity * 8 / 100);
                v[item.gift_wrap] = Scalar::Int(i64::from(rng.random_bool(0.03)));
                if let Some(color) = product.color {
                    v[item.color_description] = text(color);
                }
                if let Some(size) = product.size {
                    v[item.size_description] = text(size);
                }
                v[item.product_type] = text("physical");
                v[item.quantity] = Scalar::Int(quantity);
                subtotal += product.price * quantity;
                weight += product.weight * quantity;
                items.push(NewItem {
                    values: v,
                    options: "[]".to_string(),
                    custom: r#"{"gift_message":null}"#.to_string(),
                });
            }
            let shipping = *pick(rng, &[0, 499, 795, 1250, 1999]);
            values[f.shipping_amount] = Scalar::Int(shipping);
            values[f.shipping_tax_amount] = Scalar::Int(0);
            values[f.tax_amount] = Scalar::Int(subtotal * 8 / 100);
            if rng.random_bool(0.15) {
                values[f.discount_amount] = Scalar::Int(subtotal / 10);
                values[f.discount_codes] = text("WELCOME10");
            } else {
                values[f.discount_amount] = Scalar::Int(0);
            }
            if rng.random_bool(0.2) {
                values[f.external_tags] = text("vip,repeat");
            }

            // Most orders older than a day have shipped; recent ones are still moving.
            let age = now - ordered_at;
            let shipped = age > DAY_MS && rng.random_bool(0.9) || age <= DAY_MS && rng.random_bool(0.3);
            let cancelled = !shipped && rng.random_bool(0.03);
            let shipped_at = ordered_at + rng.random_range(2 * 3_600_000..3 * DAY_MS);
            let shipped_at = shipped_at.min(now - 1_000);
            let state = if !shipped {
                if cancelled { "cancelled" } else { "pending_shipment" }
            } else if age > 5 * DAY_MS {
                "shipped"
            } else {
                "partially_shipped"
            };
            values[f.fulfillment_state] = text(state);
            values[f.fulfillment_transitioned_at] =
                Scalar::Int(if shipped { shipped_at } else { ordered_at });

            let place = pick(rng, &PLACES);
            let address = address_json(first, last, rng, place);
            let order = NewOrder {
                store_id,
                values,
                billing_address: Some(address.clone()),
                shipping_address: Some(address),
                custom: format!(r#"{{"sales_channel":"{platform}"}}"#),
                items,
            };
            let written = orders.write(&order, tenant.customer_id)?;
            if shipped {
                let shipment = NewShipment {
                    order_id: written.id,
                    warehouse_id,
                    tracking_number: tracking_number(rng, carrier),
                    state: shipment_state(rng, age).to_string(),
                    shipped_at: Some(shipped_at),
                    weight: (!rng.random_bool(0.1)).then_some(weight),
                    external_shipping_description: Some(format!("{carrier} {}", pick(rng, levels))),
                    carrier_name: Some(carrier.to_string()),
                    service_level: Some(pick(rng, levels).to_string()),
                    item_ids: written.item_ids,
                    item_units: Vec::new(),
                };
                let order_ref = OrderRef { customer_id: tenant.customer_id, store_id };
                ships.write(&shipment, order_ref)?;
                shipments += 1;
            }
        }
        orders.finish()?;
        ships.finish()?;
        tx.commit()?;
        done = batch_end;
        progress(done);
    }
    Ok((done, shipments))
}

/// The column positions the generator fills, looked up once.
struct OrderFields {
    external_id: usize,
    external_display_id: usize,
    external_billing_customer_id: usize,
    external_shipping_customer_id: usize,
    customer_email: usize,
    ordered_at: usize,
    invoice_number: usize,
    payment_type: usize,
    shipping_carrier_name: usize,
    shipping_carrier_service_level: usize,
    signature_required: usize,
    shipping_insurance: usize,
    gift_message: usize,
    notes: usize,
    shipping_amount: usize,
    discount_amount: usize,
    tax_amount: usize,
    shipping_tax_amount: usize,
    discount_codes: usize,
    payment_date: usize,
    external_tags: usize,
    fulfillment_state: usize,
    fulfillment_transitioned_at: usize,
    external_type: usize,
    fulfillment_warehouse_id: usize,
    country_of_origin: usize,
    currency_code: usize,
    customer_service_email: usize,
    lead_source: usize,
}

struct ItemFields {
    name: usize,
    sku: usize,
    upc: usize,
    unit_price: usize,
    unit_cost: usize,
    weight: usize,
    external_order_item_id: usize,
    external_product_id: usize,
    tax_amount: usize,
    gift_wrap: usize,
    color_description: usize,
    size_description: usize,
    product_type: usize,
    quantity: usize,
}

fn address_json(first: &str, last: &str, rng: &mut StdRng, place: &(&str, &str, &str, &str)) -> String {
    let street = format!("{} {}", rng.random_range(1..9_999), pick(rng, &STREETS));
    let street2 = rng.random_bool(0.2).then(|| format!("Apt {}", rng.random_range(1..400)));
    let phone = format!("+1-555-{:03}-{:04}", rng.random_range(100..999), rng.random_range(0..9_999));
    let mut out = String::with_capacity(220);
    crate::jsondoc::write_string_map(
        &mut out,
        [
            ("first_name", Some(first)),
            ("last_name", Some(last)),
            ("street1", Some(street.as_str())),
            ("street2", street2.as_deref()),
            ("city", Some(place.0)),
            ("region", Some(place.1)),
            ("postal_code", Some(place.2)),
            ("country", Some(place.3)),
            ("telephone", Some(phone.as_str())),
        ],
    );
    out
}

fn tracking_number(rng: &mut StdRng, carrier: &str) -> String {
    match carrier {
        "UPS" => format!("1Z{}{}", random_hex(rng, 6).to_ascii_uppercase(), random_digits(rng, 10)),
        "USPS" => format!("9400{}", random_digits(rng, 18)),
        "FedEx" => random_digits(rng, 12),
        _ => random_digits(rng, 10),
    }
}

/// Recent shipments are early in their life; older ones are mostly notified or archived,
/// with a few stuck in error states. Every state occurs.
fn shipment_state(rng: &mut StdRng, age_ms: i64) -> &'static str {
    let roll = rng.random_range(0..100);
    if age_ms < 2 * DAY_MS {
        return STATES[(roll % 4) as usize];
    }
    match roll {
        0..=1 => "errored_processing",
        2..=3 => "delayed_notifying_of_shipment",
        4 => "errored_notifying_of_shipment",
        5..=9 => STATES[(roll % 4) as usize],
        10..=59 => "notified_shipped",
        _ => "archived",
    }
}
