//! The Tryton backend against a real trytond: one server for the binary
//! ([`LocalTryton`](draftline_erp_tryton::LocalTryton)), a pool of fresh
//! copies of the seeded demo database (`helpers`), no mocks. Faults are
//! injected by a loopback proxy in front of the real server (`proxy`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod access;
mod counts;
mod drafts;
mod faults;
mod helpers;
mod proxy;
mod reads;
mod review;
mod tools;
mod trace;
