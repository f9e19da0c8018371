//! A tenant's limits for its agents, enforced with the draft (issue 18;
//! `docs/limits.md`). The pipeline meets them in one place, the limits
//! gate ([`gate`]), which owns every decision about a limit; the rest is
//! its mechanics: the policy in the table ([`store`]), the warm instance's
//! bounded copy of it ([`cache`]), the counters that ride in the draft's
//! own transaction ([`counters`]), the counterparty rule
//! (`counterparty`), and what a caller has left, read for the examiner
//! tool ([`examine`]).
//!
//! The document itself (its schema, its strict parsing, the limits that
//! apply to a branch) is the contract's: [`draftline_contract::policy`].

pub mod cache;
mod counterparty;
pub mod counters;
pub mod examine;
pub mod gate;
pub mod store;

pub use cache::PolicyCache;
pub use counters::{CounterKind, Counting, Reservation};
pub use examine::TableExaminer;
pub use gate::{Attempt, Gate, Label, Limits, Looked, Lookup, Sending};
pub use store::{InForce, PolicyStore, SetFailure, StoredPolicy, Unreadable};
