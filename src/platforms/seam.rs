//! The seam every platform plugs into: what the rest of orderbridge may ask of a platform,
//! store or warehouse. Each platform's folder implements these; [`super::registry`] names
//! which token is which, and nothing else names a platform.

use async_trait::async_trait;

use super::reach::Address;
use super::retry::RetryPolicy;
use super::store::StoreClient;
use super::warehouse::{WarehouseClient, WarehouseSettings};
use super::{Adapter, PingError, PlatformError, Settings};
use crate::config::Config;
use crate::fields::Fields;

/// What every platform, store or warehouse, has: a name for messages, the rules of its
/// adapter and the credential check of a ping.
#[async_trait]
pub trait Platform: Sync {
    /// How messages name it ("BigCommerce", "The SFTP server").
    fn name(&self) -> &'static str;

    /// Checks the adapter's shape; problems are named under `adapter` (`adapter[key]`).
    fn validate(&self, adapter: &mut Fields);

    /// Asks the platform whether the (validated) adapter's credentials work (CONTRACT §8),
    /// connecting only within `settings.reach`.
    async fn check(&self, settings: &Settings, adapter: &Adapter) -> Result<(), PingError>;

    /// The network address the (validated) adapter names, which a customer user may point
    /// only at public addresses (CONTRACT §6); `None` where the platform connects only to
    /// hosts fixed by config (the operator's) or to none. A platform with a per-store or
    /// per-warehouse address names it here ([`Address::of_url`] for a URL field).
    fn address(&self, _adapter: &Adapter) -> Option<Address> {
        None
    }

    /// For a platform whose data is on the server's own disk (a `folder` warehouse): only
    /// admins may name such a place, and it must lie where the operator allows; the answer is
    /// the problem, named by field, when it does not. `None` for every other platform.
    fn on_this_machine(
        &self,
        _adapter: &Adapter,
        _config: &Config,
    ) -> Option<Result<(), (&'static str, String)>> {
        None
    }
}

/// A platform stores live on: it lends the engine a client for the store side of a pass.
pub trait StorePlatform: Platform {
    /// The client of a validated adapter, whose requests follow `policy`.
    fn client(
        &self,
        settings: &Settings,
        adapter: &Adapter,
        policy: RetryPolicy,
    ) -> Result<Box<dyn StoreClient>, PlatformError>;
}

/// A platform warehouses live on: it lends the engine a client for the warehouse side of a
/// pass, a file drop or a fulfillment platform's API alike.
pub trait WarehousePlatform: Platform {
    /// The client of a validated adapter for one pass, or why the warehouse cannot be reached.
    fn client(
        &self,
        adapter: &Adapter,
        settings: &WarehouseSettings,
    ) -> Result<Box<dyn WarehouseClient>, PlatformError>;
}
