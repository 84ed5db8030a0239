//! The parts of an Orders API 2026-01-01 `Order` the pull reads, as typed structs: a page of
//! 100 orders is read into these about twice as fast as into `serde_json::Value`, which builds
//! a map for every object and a string for every key. Every member is optional here, so what
//! Amazon leaves out is checked by the mapping, which names the order; an amount is kept as
//! the JSON Amazon sent (a decimal in text), so one that is not a decimal is named too.

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Order {
    pub order_id: Option<String>,
    pub created_time: Option<String>,
    pub last_updated_time: Option<String>,
    pub programs: Option<Vec<String>>,
    pub sales_channel: Option<SalesChannel>,
    pub buyer: Option<Buyer>,
    pub recipient: Option<Recipient>,
    pub proceeds: Option<Proceeds>,
    pub fulfillment: Option<Fulfillment>,
    pub order_items: Option<Vec<Item>>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct SalesChannel {
    pub channel_name: Option<String>,
    pub marketplace_id: Option<String>,
    pub marketplace_name: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Buyer {
    pub buyer_email: Option<String>,
    pub buyer_purchase_order_number: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Recipient {
    pub delivery_address: Option<Address>,
    pub delivery_preference: Option<DeliveryPreference>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Address {
    pub name: Option<String>,
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub address_line3: Option<String>,
    pub city: Option<String>,
    pub municipality: Option<String>,
    pub state_or_region: Option<String>,
    pub postal_code: Option<String>,
    pub country_code: Option<String>,
    pub phone: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct DeliveryPreference {
    pub address_instruction: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Proceeds {
    pub grand_total: Option<Money>,
    pub breakdowns: Option<Vec<Breakdown>>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct ItemProceeds {
    pub breakdowns: Option<Vec<Breakdown>>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Breakdown {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub subtotal: Option<Money>,
    pub detailed_breakdowns: Option<Vec<Detail>>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Detail {
    pub subtype: Option<String>,
    pub value: Option<Money>,
}

/// Amazon's `Money`: the amount as sent (a decimal in text), and its currency.
#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Money {
    pub amount: Option<Value>,
    pub currency_code: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Fulfillment {
    pub fulfillment_status: Option<String>,
    pub fulfilled_by: Option<String>,
    pub fulfillment_service_level: Option<String>,
    pub ship_by_window: Option<Window>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Window {
    pub latest_date_time: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Item {
    pub order_item_id: Option<String>,
    pub quantity_ordered: Option<i64>,
    pub product: Option<Product>,
    pub proceeds: Option<ItemProceeds>,
    pub fulfillment: Option<ItemFulfillment>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Product {
    pub asin: Option<String>,
    pub title: Option<String>,
    pub seller_sku: Option<String>,
    pub price: Option<Price>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Price {
    pub unit_price: Option<Money>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct ItemFulfillment {
    pub packing: Option<Packing>,
    pub shipping: Option<Shipping>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Packing {
    pub gift_option: Option<GiftOption>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct GiftOption {
    pub gift_message: Option<String>,
    pub gift_wrap_level: Option<String>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Shipping {
    pub shipping_constraints: Option<Constraints>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(rename_all = "camelCase", default)]
pub struct Constraints {
    pub signature_confirmation: Option<String>,
}

/// A page of `searchOrders`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub orders: Vec<Order>,
    #[serde(default)]
    pub pagination: Option<Pagination>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct Pagination {
    pub next_token: Option<String>,
}
