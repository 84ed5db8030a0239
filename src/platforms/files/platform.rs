//! File warehouses as the platform registry sees them: one platform per kind of file
//! exchange, with the adapter's rules, the ping's check and the warehouse a pass drives.

use async_trait::async_trait;

use super::{FileSettings, Kind, Warehouse};
use crate::fields::Fields;
use crate::platforms::seam::Platform;
use crate::platforms::{Adapter, PingError, PlatformError, Settings};

/// A platform warehouses live on: it lends the engine the warehouse side of a pass. Every
/// warehouse platform orderbridge syncs today exchanges files, so that side is theirs.
pub trait WarehousePlatform: Platform {
    /// The warehouse of a validated adapter for one pass, or why it cannot be reached.
    fn warehouse(&self, adapter: &Adapter, settings: &FileSettings) -> Result<Warehouse, PlatformError>;
}

/// A file warehouse platform of one kind.
pub struct FileWarehouse(pub Kind);

#[async_trait]
impl Platform for FileWarehouse {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn validate(&self, adapter: &mut Fields) {
        super::validate(adapter, self.0);
    }

    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        super::check(self.0, adapter, settings.timeout).await.map_err(PingError::from)
    }
}

impl WarehousePlatform for FileWarehouse {
    fn warehouse(&self, adapter: &Adapter, settings: &FileSettings) -> Result<Warehouse, PlatformError> {
        Warehouse::new(self.0, adapter, settings)
    }
}
