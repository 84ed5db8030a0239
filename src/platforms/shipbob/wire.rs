//! ShipBob's answers as orderbridge reads them: only the members the annex uses, each typed as
//! ShipBob's OpenAPI file declares it (`Channels.ChannelViewModel`, `Orders.OrderViewModel`,
//! `Orders.ShipmentViewModel`, `Inventory.InventoryQuantityResponse`, …). Unknown members are
//! ignored; a member of the wrong type or out of range makes the answer unreadable.

use serde::Deserialize;

/// Get Channels (`Channels.ChannelsV2ViewModel`).
#[derive(Debug, Deserialize)]
pub struct Channels {
    #[serde(default)]
    pub items: Vec<Channel>,
    pub next: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Channel {
    pub id: i32,
    pub application_name: Option<String>,
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
}

impl Channel {
    pub fn may_create_orders(&self) -> bool {
        self.scopes.as_deref().unwrap_or_default().iter().any(|s| s == "orders_write")
    }
}

/// An order (`Orders.OrderViewModel`), as Create Order, Get Order and Get Orders give it.
#[derive(Debug, Deserialize)]
pub struct Order {
    pub id: i32,
    pub reference_id: Option<String>,
    pub status: Option<String>,
    #[serde(default)]
    pub shipments: Option<Vec<Shipment>>,
}

/// A shipment of an order (`Orders.ShipmentViewModel`).
#[derive(Debug, Deserialize)]
pub struct Shipment {
    pub status: Option<String>,
    pub ship_option: Option<String>,
    pub actual_fulfillment_date: Option<String>,
    pub last_tracking_update_at: Option<String>,
    pub tracking: Option<Tracking>,
    pub measurements: Option<Measurements>,
    #[serde(default)]
    pub products: Option<Vec<ShipmentProduct>>,
}

/// `Orders.TrackingViewModel`.
#[derive(Debug, Deserialize)]
pub struct Tracking {
    pub carrier: Option<String>,
    pub carrier_service: Option<String>,
    pub tracking_number: Option<String>,
    pub shipping_date: Option<String>,
}

/// `Orders.MeasurementsViewModel`: the parcel's weight in ounces.
#[derive(Debug, Deserialize)]
pub struct Measurements {
    pub total_weight_oz: Option<i32>,
}

/// `Orders.ShipmentProductViewModel`.
#[derive(Debug, Deserialize)]
pub struct ShipmentProduct {
    pub reference_id: Option<String>,
    pub sku: Option<String>,
    #[serde(default)]
    pub inventory_items: Option<Vec<InventoryItem>>,
}

/// `Orders.InventoryViewModel`: units of one inventory item in the shipment.
#[derive(Debug, Deserialize)]
pub struct InventoryItem {
    pub quantity: Option<i32>,
}

/// Cancel Order's answer (`Orders.CanceledOrderViewModel`).
#[derive(Debug, Deserialize)]
pub struct Canceled {
    pub status: Option<String>,
    #[serde(default)]
    pub canceled_shipment_results: Option<Vec<CancellationResult>>,
}

#[derive(Debug, Deserialize)]
pub struct CancellationResult {
    pub shipment_id: Option<i32>,
    pub is_success: Option<bool>,
    pub reason: Option<String>,
}

/// Get All Inventory Levels (`Inventory.InventoryQuantityResponsePagedResponse`).
#[derive(Debug, Deserialize)]
pub struct InventoryPage {
    #[serde(default)]
    pub items: Option<Vec<InventoryLevel>>,
    pub next: Option<String>,
}

/// `Inventory.InventoryQuantityResponse`.
#[derive(Debug, Deserialize)]
pub struct InventoryLevel {
    pub sku: Option<String>,
    pub total_fulfillable_quantity: Option<i32>,
}
