//! Live credential checks of store and warehouse adapters (CONTRACT §8).
//!
//! Placeholder with the agreed interface: every platform answers `UnsupportedPlatform`.
//! The real module replaces this file.

use serde_json::{Map, Value};

/// Where and how long the checks may go.
pub struct PingSettings {
    pub timeout: std::time::Duration,
    pub bigcommerce_api_base: String,
    pub sellbrite_api_base: String,
}

#[derive(Debug)]
pub enum PingError {
    AuthenticationFailed(String),
    Unreachable(String),
    UnsupportedPlatform,
}

pub async fn check_store(
    _settings: &PingSettings,
    _platform: &str,
    _adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    Err(PingError::UnsupportedPlatform)
}

pub async fn check_warehouse(
    _settings: &PingSettings,
    _platform: &str,
    _adapter: &Map<String, Value>,
) -> Result<(), PingError> {
    Err(PingError::UnsupportedPlatform)
}
