//! orderbridge's integration tests: one binary, one module per area.

mod common;

mod auth;
mod connections;
mod customers;
mod stores;
mod warehouses;
