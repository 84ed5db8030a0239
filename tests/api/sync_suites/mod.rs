//! The sync conformance suites: each simulator implements a small trait once, and every
//! platform of a side runs every shared scenario of that side.

mod crash;
mod stores;
pub mod warehouses;
