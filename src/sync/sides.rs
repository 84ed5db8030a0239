//! The two sides a pass drives, each from its platform in the registry: the store (orders
//! in, shipments and stock out), a client, and the warehouse (orders out, shipments and
//! stock in). The steps never name a platform.

use crate::platforms::files::{FileSettings, Warehouse};
use crate::platforms::registry;
use crate::platforms::store::StoreClient;
use crate::platforms::{self, PlatformError};

use super::{Engine, Link};

/// The store of a connection, ready to be asked.
pub type StoreSide = Box<dyn StoreClient>;

/// The client for the link's store, or why it has none.
pub fn store_for(engine: &Engine, link: &Link) -> Result<StoreSide, PlatformError> {
    let settings = engine.settings();
    let platform = registry::store(&link.store_platform).ok_or_else(|| PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync stores of platform '{}'.", link.store_platform),
    })?;
    // A store platform with an address of its own connects within the store row's reach.
    let platforms = platforms::Settings {
        reach: link.store_reach(settings.tenant_private_targets),
        ..settings.platforms.clone()
    };
    platform.client(&platforms, &link.store_adapter, settings.retry_policy())
}

/// The warehouse of the link for one pass (its files, through the platform's own
/// `Warehouse`), or why orderbridge cannot reach it.
/// Its server is connected to only within the warehouse row's reach (CONTRACT §6).
pub fn warehouse_for(engine: &Engine, link: &Link) -> Result<Warehouse, PlatformError> {
    let platform = registry::warehouse(&link.warehouse_platform).ok_or_else(|| PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync warehouses of platform '{}'.", link.warehouse_platform),
    })?;
    let settings = FileSettings {
        reach: link.warehouse_reach(engine.settings().tenant_private_targets),
        ..engine.file_settings()
    };
    platform.warehouse(&link.warehouse_adapter, &settings)
}
