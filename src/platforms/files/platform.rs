//! File warehouses as the platform registry sees them: one platform per kind of file
//! exchange, with the adapter's rules, the ping's check and the warehouse a pass drives.

use async_trait::async_trait;

use super::target::Target;
use super::{FileSettings, Kind, Warehouse};
use crate::config::Config;
use crate::platforms::reach::Address;
use crate::platforms::seam::{Known, Platform, WarehousePlatform, WarehouseSide};
use crate::platforms::warehouse::WarehouseSettings;
use crate::platforms::{Adapter, PingError, PlatformError, Settings};

/// A file warehouse platform of one kind.
pub struct FileWarehouse(pub Kind);

/// An SFTP server in the registry (`sftp`, and the hosted service's `dropstream`).
pub const SFTP: Known<dyn WarehousePlatform> = Known {
    name: Kind::Sftp.name(),
    validate: |adapter| super::validate(adapter, Kind::Sftp),
    platform: &FileWarehouse(Kind::Sftp),
};

/// An FTP server in the registry.
pub const FTP: Known<dyn WarehousePlatform> = Known {
    name: Kind::Ftp.name(),
    validate: |adapter| super::validate(adapter, Kind::Ftp),
    platform: &FileWarehouse(Kind::Ftp),
};

/// A folder on this machine in the registry.
pub const FOLDER: Known<dyn WarehousePlatform> = Known {
    name: Kind::Folder.name(),
    validate: |adapter| super::validate(adapter, Kind::Folder),
    platform: &FileWarehouse(Kind::Folder),
};

#[async_trait]
impl Platform for FileWarehouse {
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        super::check(self.0, adapter, settings.timeout, settings.reach).await.map_err(PingError::from)
    }

    /// A folder is on this machine: inside `folder_warehouse_root`, and an admin's.
    fn on_this_machine(
        &self,
        adapter: &Adapter,
        config: &Config,
    ) -> Option<Result<(), (&'static str, String)>> {
        (self.0 == Kind::Folder).then(|| {
            let url =
                adapter.get("connection_string").and_then(serde_json::Value::as_str).unwrap_or_default();
            super::folder::check_inside_root(url, &super::folder::root(config))
                .map_err(|problem| ("adapter[connection_string]", problem))
        })
    }

    /// The server of `sftp`, `dropstream` and `ftp`; a folder is on this machine (only admins
    /// set one, inside `folder_warehouse_root`).
    fn address(&self, adapter: &Adapter) -> Option<Address> {
        let (scheme, port) = match self.0 {
            Kind::Sftp => ("sftp", 22),
            Kind::Ftp => ("ftp", 21),
            Kind::Folder => return None,
        };
        let url = adapter.get("connection_string").and_then(serde_json::Value::as_str)?;
        let target = Target::parse(url, scheme, port).ok()?;
        Some(Address { field: "adapter[connection_string]", host: target.host, port: target.port })
    }
}

impl WarehousePlatform for FileWarehouse {
    fn client(
        &self,
        adapter: &Adapter,
        settings: &WarehouseSettings,
    ) -> Result<WarehouseSide, PlatformError> {
        let files = FileSettings {
            timeout: settings.platforms.timeout,
            settle: settings.settle,
            sightings: settings.memory.kept(),
            reach: settings.reach(),
            max_file_bytes: settings.platforms.max_file_bytes,
            documents: settings.documents.clone(),
            connection_id: settings.connection_id,
        };
        Ok(Box::new(Warehouse::new(self.0, adapter, &files)?))
    }
}
