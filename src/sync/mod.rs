//! The sync engine (CONTRACT §11): for every connection that is switched on, pull orders from
//! the store, send new orders to the warehouse, read shipments back and report them to the
//! store. It knows nothing of any one platform: `platforms` talks to them, and here the
//! store and warehouse sides are driven step by step.
//!
//! Orders and shipments carry their own states, and those states are the queue: each step
//! claims rows, talks to the platform, and commits what it learned together with the state
//! or cursor that records it, so a pass interrupted anywhere (kill -9) is redone by the next
//! one without losing or doubling anything.
//!
//! [`Engine`] starts passes (`pass`), and each step of a pass gets one `context::Context`
//! (the engine's database thread and settings, the connection, the run) instead of the engine.

pub mod command;
mod context;
mod documents;
mod engine;
mod inbox;
mod lease;
mod link;
mod matching;
pub(crate) mod notify;
mod orders_in;
mod orders_out;
mod pages;
mod pass;
pub mod problems;
mod receipts;
pub mod runs;
mod scheduler;
mod settings;
mod shipments_in;
mod sides;
pub(crate) mod states;
mod step;
mod stock;
mod walking;
mod warehouse_walks;

#[cfg(test)]
mod idle_tests;

pub use engine::{Engine, EngineError, Started};
pub use link::Link;
pub use runs::{Run, RunCounts, Trigger};
pub use scheduler::start as start_schedule;
pub use settings::Settings;
