//! Everything that talks to a store or warehouse platform: one module per platform, each
//! owning its adapter rules, its credential check and the calls the sync engine makes.

pub mod error;

pub use error::PlatformError;
