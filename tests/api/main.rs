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
mod platforms;
mod products;
mod reach;
mod revocation;
mod seed;
mod shipments;
mod stores;
mod sync;
mod sync_binary;
mod sync_files;
mod sync_sellbrite;
mod variant_collections;
mod warehouses;
