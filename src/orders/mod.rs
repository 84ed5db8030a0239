//! Orders: their fields, the model and its validation (`model`), and storage (`write`) with
//! the documents the API serves. The routes are `resources::orders`.

pub mod fields;
pub mod model;
pub mod write;

pub use write::rerender;
