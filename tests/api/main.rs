//! orderbridge's integration tests: one binary, one module per area.

mod common;
mod process;
mod standins;
mod sync_rig;

mod auth;
mod binary;
mod browser;
mod cli_ops;
mod conditional;
mod connections;
mod crash_writes;
mod customers;
mod fixtures;
mod fuzz;
mod import;
mod leaks;
mod migrations;
mod openapi;
mod orders;
mod ping_live;
mod ping_routes;
mod ping_shopify;
mod platforms;
mod products;
mod revocation;
mod seed;
mod shipments;
mod shopify_schema;
mod stores;
mod sync;
mod sync_binary;
mod sync_sellbrite;
mod sync_shopify;
mod variant_collections;
mod warehouses;
