//! The API's resources (service-api.md, CONTRACT §6, §7, §9): one module per resource, each
//! owning its routes, its SQL and its row mapping, over the HTTP layer (`crate::http`). The
//! records they serve live below (`crate::orders`, `crate::shipments`), the engine beside
//! (`crate::sync`): `sync_runs` is the engine's face in the API.

pub mod adapter;
pub mod connections;
pub mod customers;
pub mod holders;
pub mod import;
pub mod listing;
pub mod orders;
pub mod products;
pub mod shipments;
pub mod stores;
pub mod sync_runs;
pub mod variant_collections;
pub mod warehouses;
