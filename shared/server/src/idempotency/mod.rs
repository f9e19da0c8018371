//! The idempotency protocol of DESIGN.md on DynamoDB.
//!
//! - [`answered`]: the keys this instance answered lately, a hint that a
//!   retry is a replay (its lookup reads the record alone).
//! - [`key`]: the key newtype (header or run id + `client_ref`).
//! - [`record`]: the key record and its item mapping, and how a stored record
//!   answers a new call ([`NextAction`]).
//! - [`store`]: the writes: the record inside the draft's one transaction
//!   (`attribute_not_exists` + `ALL_OLD`), and the in-progress lease with its
//!   fencing condition for work that cannot share the transaction.
//! - [`transaction`]: one transaction of a key by its named parts (record,
//!   answer, document, audit, counters), and a cancellation read back by
//!   the part that refused.

pub mod answered;
pub mod key;
pub mod record;
pub mod store;
pub mod transaction;

pub use answered::AnsweredKeys;
pub use key::IdempotencyKey;
pub use record::{IdempotencyRecord, NextAction, RecordStatus, StoredResponse};
pub use store::{Claim, ClaimedWith, Claiming, CommitFailure, IdempotencyStore, LeaseToken};
pub use transaction::KeyTransaction;
