//! File warehouses as the platform registry sees them: the adapter's rules, the ping's check
//! and where a pass finds the files, for each kind of file exchange.

use async_trait::async_trait;

use super::Location;
use crate::fields::Fields;
use crate::platforms::reach::Address;
use crate::platforms::seam::Platform;
use crate::platforms::target::Target;
use crate::platforms::{Adapter, PingError, PlatformError, Settings, file_url, folder, ftp, sftp};

/// A platform warehouses live on: where its files are. Every warehouse platform orderbridge
/// syncs today exchanges files, so the warehouse side of the seam is theirs.
pub trait WarehousePlatform: Platform {
    /// Where the validated adapter's files are, or why they cannot be reached.
    fn location(&self, adapter: &Adapter) -> Result<Location, PlatformError>;
}

/// How a file warehouse exchanges its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sftp,
    Ftp,
    Folder,
}

/// A file warehouse platform of one kind.
pub struct FileWarehouse(pub Kind);

#[async_trait]
impl Platform for FileWarehouse {
    fn name(&self) -> &'static str {
        match self.0 {
            Kind::Sftp => "The SFTP server",
            Kind::Ftp => "The FTP server",
            Kind::Folder => "The folder",
        }
    }

    fn validate(&self, adapter: &mut Fields) {
        match self.0 {
            Kind::Sftp => file_url::validate(adapter, "sftp"),
            Kind::Ftp => file_url::validate(adapter, "ftp"),
            Kind::Folder => folder::validate(adapter),
        }
    }

    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError> {
        match self.0 {
            Kind::Sftp => sftp::check(adapter, settings.timeout, settings.reach).await,
            Kind::Ftp => ftp::check(adapter, settings.reach).await,
            Kind::Folder => {
                let location =
                    self.location(adapter).map_err(|e| PingError::AuthenticationFailed(e.to_string()))?;
                super::check(&location, settings.timeout).await.map_err(|e| match e {
                    PlatformError::Unreachable { message, .. } => PingError::Unreachable(message),
                    other => PingError::AuthenticationFailed(other.message().to_string()),
                })
            }
        }
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
    fn location(&self, adapter: &Adapter) -> Result<Location, PlatformError> {
        let token = match self.0 {
            Kind::Sftp => "sftp",
            Kind::Ftp => "ftp",
            Kind::Folder => "folder",
        };
        Location::of(token, adapter).map_err(|problem| {
            PlatformError::Refused(format!("The warehouse's connection_string {problem}."))
        })
    }
}
