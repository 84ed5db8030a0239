//! Shipments: the model, its validation and storage (`model`), with the documents the API
//! serves. The route is `resources::shipments`.

pub mod model;

pub use model::{NewShipment, STATES, ShipmentWriter, rerender};
