//! Black-box tests over real HTTP against the embedded DynamoDB engine.
//! One binary (`cargo test --test api`), one `spawn_app()` per test.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod auth;
mod drafts;
mod helpers;
mod idempotency_lease;
mod listing;
mod reads;
mod validation;
