//! eBay's JSON as the client reads it (Sell Fulfillment v1 and Sell Inventory v1, only the
//! members the annex reads): every member optional, so an order missing one is named by the
//! mapping rather than failing the whole page's parse.

use serde::Deserialize;

/// `getOrders`' answer (`OrderSearchPagedCollection`).
#[derive(Deserialize, Debug)]
pub struct OrderPage {
    pub total: Option<u64>,
    #[serde(default)]
    pub orders: Vec<Order>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub order_id: Option<String>,
    pub creation_date: Option<String>,
    pub last_modified_date: Option<String>,
    pub order_fulfillment_status: Option<String>,
    pub order_payment_status: Option<String>,
    pub buyer: Option<Buyer>,
    pub buyer_checkout_notes: Option<String>,
    pub cancel_status: Option<CancelStatus>,
    pub pricing_summary: Option<PricingSummary>,
    pub payment_summary: Option<PaymentSummary>,
    #[serde(default)]
    pub fulfillment_start_instructions: Vec<Instruction>,
    #[serde(default)]
    pub line_items: Vec<LineItem>,
    /// Its members' names are the tags (`authenticityVerification`, `fulfillmentProgram`).
    pub program: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize, Debug)]
pub struct Buyer {
    pub username: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CancelStatus {
    pub cancel_state: Option<String>,
}

/// An eBay `Amount`: a decimal written as text, and its currency.
#[derive(Deserialize, Debug, Clone)]
pub struct Amount {
    pub value: Option<serde_json::Value>,
    pub currency: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct PricingSummary {
    pub price_discount: Option<Amount>,
    pub delivery_cost: Option<Amount>,
    pub delivery_discount: Option<Amount>,
    pub tax: Option<Amount>,
    pub total: Option<Amount>,
}

#[derive(Deserialize, Debug)]
pub struct PaymentSummary {
    #[serde(default)]
    pub payments: Vec<Payment>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    pub payment_method: Option<String>,
    pub payment_date: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Instruction {
    pub fulfillment_instructions_type: Option<String>,
    pub ebay_supported_fulfillment: Option<bool>,
    pub shipping_step: Option<ShippingStep>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ShippingStep {
    pub shipping_carrier_code: Option<String>,
    pub shipping_service_code: Option<String>,
    pub ship_to: Option<ShipTo>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ShipTo {
    pub full_name: Option<String>,
    pub contact_address: Option<Address>,
    pub primary_phone: Option<Phone>,
    pub email: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub state_or_province: Option<String>,
    pub postal_code: Option<String>,
    pub country_code: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Phone {
    pub phone_number: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct LineItem {
    pub line_item_id: Option<String>,
    pub legacy_item_id: Option<String>,
    pub sku: Option<String>,
    pub title: Option<String>,
    pub quantity: Option<i64>,
    pub listing_marketplace_id: Option<String>,
    pub purchase_marketplace_id: Option<String>,
    pub line_item_cost: Option<Amount>,
    #[serde(default)]
    pub applied_promotions: Vec<Promotion>,
    #[serde(default)]
    pub taxes: Vec<Tax>,
    pub line_item_fulfillment_status: Option<String>,
    pub line_item_fulfillment_instructions: Option<LineInstructions>,
    #[serde(default)]
    pub variation_aspects: Vec<Aspect>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Promotion {
    pub discount_amount: Option<Amount>,
}

#[derive(Deserialize, Debug)]
pub struct Tax {
    pub amount: Option<Amount>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct LineInstructions {
    pub ship_by_date: Option<String>,
}

#[derive(Deserialize, Debug)]
pub struct Aspect {
    pub name: Option<String>,
    pub value: Option<String>,
}

/// `getShippingFulfillments`' answer.
#[derive(Deserialize, Debug)]
pub struct Fulfillments {
    #[serde(default)]
    pub fulfillments: Vec<Fulfillment>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Fulfillment {
    pub fulfillment_id: Option<String>,
    pub shipment_tracking_number: Option<String>,
    #[serde(default)]
    pub line_items: Vec<FulfilledLine>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct FulfilledLine {
    pub line_item_id: Option<String>,
    pub quantity: Option<i64>,
}
