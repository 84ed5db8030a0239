//! The two sides a pass drives: the store (orders in, shipments and stock out) and the
//! warehouse (orders out, shipments and stock in). Each is an enum over the platforms that
//! can sync, so the steps never name a platform.

use std::time::Duration;

use crate::platforms::PlatformError;
use crate::platforms::big_commerce::client::{self as big_commerce, BigCommerce};
use crate::platforms::files::{self, FileSession, Location};
use crate::platforms::reach::Reach;
use crate::platforms::sellbrite::client::{self as sellbrite, Sellbrite};
use crate::platforms::store::{ListedOrder, Listing, Notified, PulledOrder, ShipmentNotice};

use super::{Engine, Link};

/// The store of a connection, ready to be asked.
pub enum StoreSide {
    BigCommerce(BigCommerce),
    Sellbrite(Sellbrite),
}

impl StoreSide {
    /// The client for the link's store, or why it has none.
    pub fn for_link(engine: &Engine, link: &Link) -> Result<StoreSide, PlatformError> {
        let settings = engine.settings();
        match link.store_platform.as_str() {
            "big_commerce" | "bigcommerce" => Ok(StoreSide::BigCommerce(BigCommerce::new(
                engine.http.clone(),
                &settings.bigcommerce_api_base,
                &link.store_adapter,
                settings.retry_policy(),
            )?)),
            "sellbrite" => Ok(StoreSide::Sellbrite(Sellbrite::new(
                engine.http.clone(),
                &settings.sellbrite_api_base,
                &link.store_adapter,
                settings.retry_policy(),
            )?)),
            other => Err(PlatformError::Rejected {
                status: 0,
                message: format!("orderbridge cannot sync stores of platform '{other}'."),
            }),
        }
    }

    /// The lists a pull reads, in order.
    pub fn listings(&self) -> &'static [Listing] {
        match self {
            StoreSide::BigCommerce(_) => &[Listing::Orders],
            StoreSide::Sellbrite(_) => &[Listing::Orders, Listing::Cancellations],
        }
    }

    /// One page (from 1) of a listing of the orders since `since_ms`.
    pub async fn orders_page(
        &self,
        listing: Listing,
        since_ms: Option<i64>,
        page: u32,
    ) -> Result<Vec<ListedOrder>, PlatformError> {
        match self {
            StoreSide::BigCommerce(client) => match listing {
                Listing::Orders => client.orders_page(since_ms, page).await,
                Listing::Cancellations => Ok(Vec::new()),
            },
            StoreSide::Sellbrite(client) => client.orders_page(listing, since_ms, page).await,
        }
    }

    /// A page shorter than this is the last.
    pub fn page_size(&self) -> usize {
        match self {
            StoreSide::BigCommerce(_) => BigCommerce::PAGE_SIZE as usize,
            StoreSide::Sellbrite(_) => Sellbrite::PAGE_SIZE as usize,
        }
    }

    /// How far before its cursor a pull starts reading again: BigCommerce's modification
    /// times may lag their commit by a little; Sellbrite's cursor is the order's placing, and
    /// an order can reach its list well after it was placed on the channel.
    pub fn overlap(&self) -> Duration {
        match self {
            StoreSide::BigCommerce(_) => Duration::from_secs(5 * 60),
            StoreSide::Sellbrite(_) => Duration::from_secs(24 * 3600),
        }
    }

    /// Whether the list comes oldest first by the cursor's time, so each page may commit
    /// the cursor it reached. Sellbrite documents no order, so its cursor moves only after
    /// the whole list was read.
    pub fn sorted_by_cursor(&self) -> bool {
        matches!(self, StoreSide::BigCommerce(_))
    }

    /// Whether a changed order is written again after it went to the warehouse. Sellbrite's
    /// lists change as the order is fulfilled (units fulfilled, a warehouse's fulfillments
    /// shrinking to what is left), which our own notifications cause: an order already sent
    /// keeps the lines the warehouse was sent.
    pub fn rewrites_sent_orders(&self) -> bool {
        matches!(self, StoreSide::BigCommerce(_))
    }

    /// The whole order (items, addresses) as an import record.
    pub async fn order_record(&self, order: &ListedOrder) -> Result<PulledOrder, PlatformError> {
        match self {
            StoreSide::BigCommerce(client) => client.order_record(order).await,
            StoreSide::Sellbrite(client) => client.order_record(order),
        }
    }

    pub async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        match self {
            StoreSide::BigCommerce(client) => client.notify(notice).await,
            StoreSide::Sellbrite(client) => client.notify(notice).await,
        }
    }

    /// Levels in one stock request: what a crash can make the store hear twice.
    pub fn stock_per_request(&self) -> usize {
        match self {
            StoreSide::BigCommerce(_) => big_commerce::STOCK_PER_REQUEST,
            StoreSide::Sellbrite(_) => sellbrite::STOCK_PER_REQUEST,
        }
    }

    /// Sends absolute stock levels; returns how many requests it took.
    pub async fn set_stock(&self, levels: &[(String, i64)]) -> Result<usize, PlatformError> {
        match self {
            StoreSide::BigCommerce(client) => client.set_stock(levels).await,
            StoreSide::Sellbrite(client) => client.set_stock(levels).await,
        }
    }
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
    let not_files = || PlatformError::Rejected {
        status: 0,
        message: format!("orderbridge cannot sync warehouses of platform '{}'.", link.warehouse_platform),
    };
    if !matches!(link.warehouse_platform.as_str(), "sftp" | "ftp" | "dropstream" | "folder") {
        return Err(not_files());
    }
    Location::of(&link.warehouse_platform, &link.warehouse_adapter)
        .map(|location| location.reached_under(reach))
        .map_err(|problem| PlatformError::Refused(format!("The warehouse's connection_string {problem}.")))
}

/// Opens a session with the warehouse's files.
pub async fn open_files(engine: &Engine, location: &Location) -> Result<FileSession, PlatformError> {
    files::open(location, engine.settings().request_timeout).await
}
