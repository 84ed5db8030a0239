//! The one list of the platforms orderbridge knows: which token names which platform, for
//! stores and for warehouses. Everything else about a platform lives in its own folder
//! beside this file, behind the traits of [`super::seam`]; adding one is its folder and a
//! line below.
//!
//! A token not listed is a platform orderbridge does not know: its adapter is accepted as
//! any object (the hosted service has more platforms than we sync), it has no live check,
//! and it cannot sync.

use super::files;
use super::seam::{Known, Platform, StorePlatform, WarehousePlatform};
use super::{Owner, amazon, big_commerce, ebay, sellbrite, shipbob, shipstation, shopify, woocommerce};

/// Store platforms by token. `bigcommerce` is the token orderbridge used first.
static STORES: &[(&str, Known<dyn StorePlatform>)] = &[
    ("big_commerce", big_commerce::PLATFORM),
    ("bigcommerce", big_commerce::PLATFORM),
    ("sellbrite", sellbrite::PLATFORM),
    ("woocommerce", woocommerce::PLATFORM),
    ("woo_commerce", woocommerce::PLATFORM),
    ("shopify", shopify::PLATFORM),
    ("amazon", amazon::PLATFORM),
    ("ebay", ebay::PLATFORM),
];

/// Warehouse platforms by token. `dropstream` is the hosted service's own SFTP file drop.
static WAREHOUSES: &[(&str, Known<dyn WarehousePlatform>)] = &[
    ("sftp", files::SFTP),
    ("dropstream", files::SFTP),
    ("ftp", files::FTP),
    ("folder", files::FOLDER),
    ("shipbob", shipbob::PLATFORM),
    ("shipstation", shipstation::PLATFORM),
];

/// The store platform a token names.
pub fn store(token: &str) -> Option<Known<dyn StorePlatform>> {
    STORES.iter().find(|(t, _)| *t == token).map(|(_, p)| *p)
}

/// The warehouse platform a token names.
pub fn warehouse(token: &str) -> Option<Known<dyn WarehousePlatform>> {
    WAREHOUSES.iter().find(|(t, _)| *t == token).map(|(_, p)| *p)
}

/// The platform a token names for `owner`: the same token may mean nothing on the other side.
pub fn platform(owner: Owner, token: &str) -> Option<Known<dyn Platform>> {
    let (name, validate, platform): (_, _, &'static dyn Platform) = match owner {
        Owner::Store => store(token).map(|k| (k.name, k.validate, k.platform as _))?,
        Owner::Warehouse => warehouse(token).map(|k| (k.name, k.validate, k.platform as _))?,
    };
    Some(Known { name, validate, platform })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_tokens_name_their_platform_per_owner() {
        let name = |owner, token| platform(owner, token).map(|p| p.name);
        assert_eq!(name(Owner::Store, "big_commerce"), Some("BigCommerce"));
        assert_eq!(name(Owner::Store, "bigcommerce"), Some("BigCommerce"));
        assert_eq!(name(Owner::Store, "sellbrite"), Some("Sellbrite"));
        assert_eq!(name(Owner::Store, "woocommerce"), Some("WooCommerce"));
        assert_eq!(name(Owner::Store, "woo_commerce"), Some("WooCommerce"));
        assert_eq!(name(Owner::Store, "shopify"), Some("Shopify"));
        assert_eq!(name(Owner::Store, "amazon"), Some("Amazon"));
        assert_eq!(name(Owner::Warehouse, "amazon"), None);
        assert_eq!(name(Owner::Store, "ebay"), Some("eBay"));
        assert_eq!(name(Owner::Warehouse, "ebay"), None);
        assert_eq!(name(Owner::Store, "sftp"), None);
        assert_eq!(name(Owner::Warehouse, "dropstream"), Some("The SFTP server"));
        assert_eq!(name(Owner::Warehouse, "ftp"), Some("The FTP server"));
        assert_eq!(name(Owner::Warehouse, "folder"), Some("The folder"));
        assert_eq!(name(Owner::Warehouse, "shipbob"), Some("ShipBob"));
        assert_eq!(name(Owner::Store, "shipbob"), None);
        assert_eq!(name(Owner::Warehouse, "shipstation"), Some("ShipStation"));
        assert_eq!(name(Owner::Store, "shipstation"), None);
        assert_eq!(name(Owner::Warehouse, "bigcommerce"), None);
    }
}
