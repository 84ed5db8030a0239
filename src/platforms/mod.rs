//! Everything that talks to a store or warehouse platform: one module per platform, each
//! owning the calls the sync engine makes, over the shared HTTP helpers, retry policy and
//! error type.

pub mod big_commerce;
pub mod error;
pub mod files;
pub mod http;
pub mod retry;

pub use error::PlatformError;
