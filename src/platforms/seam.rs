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

/// A platform as the registry knows it: how messages name it ("BigCommerce", "The SFTP
/// server"), the rules of its adapter, checked before anything else (problems named under
/// `adapter`, `adapter[key]`), and what it does.
pub struct Known<P: ?Sized + 'static> {
    pub name: &'static str,
    pub validate: fn(&mut Fields),
    pub platform: &'static P,
}

impl<P: ?Sized> Clone for Known<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: ?Sized> Copy for Known<P> {}

/// The store side of a pass: a store platform's client.
pub type StoreSide = Box<dyn StoreClient>;

/// The warehouse side of a pass: a warehouse platform's client.
pub type WarehouseSide = Box<dyn WarehouseClient>;

/// What every platform, store or warehouse, does besides its side of a pass: the credential
/// check of a ping and where its adapter points.
#[async_trait]
pub trait Platform: Sync {
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
    /// The client of a validated adapter, whose requests follow `with.policy`.
    fn client(&self, adapter: &Adapter, with: &StoreSettings) -> Result<StoreSide, PlatformError>;
}

/// What a store client needs from the configuration and the engine.
#[derive(Clone)]
pub struct StoreSettings {
    /// Where the platforms are (the store row's reach put in), and how long one answer may take.
    pub platforms: Settings,
    /// How requests are tried again.
    pub policy: RetryPolicy,
}

/// A platform warehouses live on: it lends the engine a client for the warehouse side of a
/// pass, a file drop or a fulfillment platform's API alike.
pub trait WarehousePlatform: Platform {
    /// The client of a validated adapter for one pass, or why the warehouse cannot be reached.
    fn client(&self, adapter: &Adapter, with: &WarehouseSettings) -> Result<WarehouseSide, PlatformError>;
}
