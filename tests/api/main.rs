//! orderbridge's integration tests: one binary, one module per area.

mod common;

mod auth;
mod customers;
mod fixtures;
mod import;
mod orders;
mod seed;
mod shipments;
