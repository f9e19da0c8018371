//! Black-box tests over real HTTP against the embedded DynamoDB engine.
//! One binary (`cargo test --test api`), one `spawn_app()` per test.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod auth;
mod browser;
mod budget;
mod catalogue;
mod chromium;
mod contract;
mod demo_data;
mod docs;
mod drafts;
mod dynamo_proxy;
mod events;
mod faults;
mod function_process;
mod grants;
mod hardening;
mod helpers;
mod hostile_input;
mod idempotency_lease;
mod input_required;
mod isolation;
mod jwks;
mod lambda;
mod limits;
mod listing;
mod mail;
mod mcp;
mod near_duplicates;
mod notify;
mod observability;
mod otlp;
mod reads;
mod request_ids;
mod review;
mod review_access;
mod startup_config;
mod takeover;
mod tryton;
mod tryton_boundary;
mod tryton_proxy;
mod tryton_web;
mod validation;
mod vercel;
mod webhooks;
