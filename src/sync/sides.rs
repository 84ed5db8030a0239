//! The two sides a pass drives, each a client from its platform in the registry: the store
//! (orders in, shipments and stock out) and the warehouse (orders out, shipments and stock
//! in). The steps never name a platform.

pub use crate::platforms::seam::{StoreSide, WarehouseSide};

use crate::platforms::registry;
use crate::platforms::seam::StoreSettings;
use crate::platforms::warehouse::WarehouseSettings;
use crate::platforms::{self, PlatformError};

use super::context::Context;
use super::documents::Numbers;

/// The client for the link's store, or why it has none.
pub fn store_for(ctx: &Context<'_>) -> Result<StoreSide, PlatformError> {
    let (link, settings) = (ctx.link, ctx.settings());
    let platform = registry::store(&link.store_platform).ok_or_else(|| PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync stores of platform '{}'.", link.store_platform),
    })?;
    // A store platform with an address of its own connects within the store row's reach.
    let platforms = platforms::Settings {
        reach: link.store_reach(settings.tenant_private_targets),
        ..settings.platforms.clone()
    };
    let with = StoreSettings { platforms, policy: settings.retry_policy() };
    platform.platform.client(&link.store_adapter, &with)
}

/// The client for the link's warehouse for one pass, or why orderbridge cannot reach it. A
/// warehouse with an address of its own is connected to only within the warehouse row's
/// reach (CONTRACT §6).
pub fn warehouse_for(ctx: &Context<'_>) -> Result<WarehouseSide, PlatformError> {
    let (link, settings) = (ctx.link, ctx.settings());
    let platform = registry::warehouse(&link.warehouse_platform).ok_or_else(|| PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync warehouses of platform '{}'.", link.warehouse_platform),
    })?;
    let warehouse = WarehouseSettings {
        platforms: platforms::Settings {
            reach: link.warehouse_reach(settings.tenant_private_targets),
            ..settings.platforms.clone()
        },
        settle: settings.file_settle,
        memory: ctx.memory().clone(),
        policy: settings.retry_policy(),
        warehouse_id: link.warehouse_id,
        connection_id: link.id,
        documents: std::sync::Arc::new(Numbers { pool: ctx.pool().clone(), warehouse_id: link.warehouse_id }),
    };
    platform.platform.client(&link.warehouse_adapter, &warehouse)
}
