//! A tenant's limits for its agents, enforced with the draft (issue 18;
//! `docs/limits.md`): the policy in the table ([`store`]), the warm
//! instance's bounded copy of it ([`cache`]), the run and day counters
//! that ride in the draft's own transaction ([`counters`]), the
//! counterparty rule ([`counterparty`]), the one place that decides what
//! a reached limit does to a call ([`gate`]), the runs a warm instance
//! counted lately ([`runs`]), and what a caller has left, read for the
//! examiner tool ([`examine`]).
//!
//! The document itself (its schema, its strict parsing, the limits that
//! apply to a branch) is the contract's: [`draftline_contract::policy`].

pub mod cache;
pub mod counterparty;
pub mod counters;
pub mod examine;
pub mod gate;
pub mod runs;
pub mod store;

pub use cache::PolicyCache;
pub use counters::{CounterKind, Counting, Reservation};
pub use examine::TableExaminer;
pub use gate::Gate;
pub use runs::KnownRuns;
pub use store::{InForce, PolicyStore, SetFailure, StoredPolicy, Unreadable};
