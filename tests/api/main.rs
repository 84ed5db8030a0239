//! orderbridge's integration tests: one binary, one module per area.

mod common;

mod auth;
mod customers;
mod products;
mod variant_collections;
