//! ShipStation's answers as orderbridge reads them: only the members the annex uses, typed as
//! the file declares them (`create_shipments_response_body`, `create_shipment_response`,
//! `shipment`, `list_labels_response_body`, `label`, `label_package`, `weight`, `warehouse`,
//! `error_response_body`, and `getInventoryLevels`' answer). Unknown members are ignored; a
//! member of the wrong type makes the answer unreadable.

use serde::Deserialize;
use serde_json::Value;

/// `error_response_body`.
#[derive(Debug, Deserialize)]
pub struct ErrorBody {
    #[serde(default)]
    pub errors: Vec<ErrorItem>,
}

/// `error`.
#[derive(Debug, Deserialize)]
pub struct ErrorItem {
    pub error_code: Option<String>,
    pub message: Option<String>,
}

/// `create_shipments_response_body`.
#[derive(Debug, Deserialize)]
pub struct Created {
    #[serde(default)]
    pub shipments: Vec<Shipment>,
}

/// A shipment as `create_shipment_response` and `get_shipment_by_external_id` give it.
#[derive(Debug, Deserialize)]
pub struct Shipment {
    pub shipment_id: Option<String>,
    pub external_shipment_id: Option<String>,
    /// Only in a create's answer: why ShipStation refused this one.
    #[serde(default)]
    pub errors: Option<Vec<String>>,
}

/// `warehouse`: its `origin_address` is sent as `ship_from` as it is.
#[derive(Debug, Deserialize)]
pub struct Warehouse {
    pub origin_address: Option<Value>,
}

/// `list_labels_response_body`.
#[derive(Debug, Deserialize)]
pub struct Labels {
    #[serde(default)]
    pub labels: Vec<Label>,
}

/// `label`.
#[derive(Debug, Clone, Deserialize)]
pub struct Label {
    pub label_id: Option<String>,
    pub status: Option<String>,
    pub shipment_id: Option<String>,
    pub external_shipment_id: Option<String>,
    pub ship_date: Option<String>,
    pub created_at: Option<String>,
    pub tracking_number: Option<String>,
    pub is_return_label: Option<bool>,
    pub carrier_code: Option<String>,
    pub service_code: Option<String>,
    pub voided: Option<bool>,
    #[serde(default)]
    pub packages: Option<Vec<Package>>,
}

/// `label_package`.
#[derive(Debug, Clone, Deserialize)]
pub struct Package {
    pub weight: Option<Weight>,
}

/// `weight`.
#[derive(Debug, Clone, Deserialize)]
pub struct Weight {
    pub value: Option<f64>,
    pub unit: Option<String>,
}

/// `getInventoryLevels`' answer.
#[derive(Debug, Deserialize)]
pub struct Inventory {
    #[serde(default)]
    pub inventory: Vec<Value>,
    pub page: Option<i64>,
    pub pages: Option<i64>,
    pub links: Option<Links>,
}

#[derive(Debug, Deserialize)]
pub struct Links {
    pub next: Option<Link>,
}

#[derive(Debug, Deserialize)]
pub struct Link {
    pub href: Option<String>,
}
