//! The two sides a pass drives: the store (orders in, shipments and stock out), a client of
//! its platform from the registry, and the warehouse (orders out, shipments and stock in).
//! The steps never name a platform.

use crate::platforms::files::{self, FileSession, Location};
use crate::platforms::reach::Reach;
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

/// The file folders of a warehouse (CONTRACT §11, "File warehouses").
pub struct Folders {
    pub orders: String,
    pub shipments: String,
    pub inventory: String,
}

impl Folders {
    pub fn of(link: &Link) -> Folders {
        Folders {
            orders: link.warehouse_dir("orders_dir", "orders"),
            shipments: link.warehouse_dir("shipments_dir", "shipments"),
            inventory: link.warehouse_dir("inventory_dir", "inventory"),
        }
    }
}

/// `dir/name`, where an empty `dir` is the root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

/// The CSV files waiting in a warehouse folder, in name order; a name starting with `.` is
/// a file still being written (the convention orderbridge follows itself).
pub async fn waiting_files(files: &mut FileSession, dir: &str) -> Result<Vec<String>, PlatformError> {
    let mut names = files.list(dir).await?;
    names.retain(|name| !name.starts_with('.') && name.to_ascii_lowercase().ends_with(".csv"));
    Ok(names)
}

/// Moves a file that was read into `{dir}/processed/`.
pub async fn file_processed(files: &mut FileSession, dir: &str, name: &str) -> Result<(), PlatformError> {
    let done = join(dir, "processed");
    files.make_dir_all(&done).await?;
    files.rename(&join(dir, name), &join(&done, name)).await
}

/// Moves a file that could not be used into `{dir}/failed/`, beside `{name}.errors.txt`
/// listing each bad line.
pub async fn file_failed(
    files: &mut FileSession,
    dir: &str,
    name: &str,
    bad: &[super::csv::BadLine],
) -> Result<(), PlatformError> {
    let place = join(dir, "failed");
    files.make_dir_all(&place).await?;
    let report = super::csv::error_report(name, bad);
    files.write(&join(&place, &format!("{name}.errors.txt")), report.as_bytes()).await?;
    files.rename(&join(dir, name), &join(&place, name)).await
}

/// Where the link's warehouse keeps its files, or why orderbridge cannot reach it; its
/// server is connected to only within `reach`.
pub fn warehouse_location(link: &Link, reach: Reach) -> Result<Location, PlatformError> {
    let platform = registry::warehouse(&link.warehouse_platform).ok_or_else(|| PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync warehouses of platform '{}'.", link.warehouse_platform),
    })?;
    platform.location(&link.warehouse_adapter).map(|location| location.reached_under(reach))
}

/// Opens a session with the warehouse's files.
pub async fn open_files(engine: &Engine, location: &Location) -> Result<FileSession, PlatformError> {
    files::open(location, engine.settings().request_timeout).await
}
