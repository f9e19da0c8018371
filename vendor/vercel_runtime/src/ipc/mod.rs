pub mod core;
pub mod log;
pub mod metric;
