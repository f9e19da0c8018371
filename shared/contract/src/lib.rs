//! # draftline-contract
//!
//! What a draftline tool sees, and nothing of how it is served: ERP- and
//! storage-agnostic. `draftline-server` runs tools through one pipeline;
//! `draftline-erp` supplies them.
//!
//! ## Layout
//! - [`tool`]: the tool traits ([`tool::ReadTool`], [`tool::DraftTool`]),
//!   definitions, tiers, annotations, prepared drafts (atomic with
//!   draftline's table, or external under a lease), and the [`tool::Registry`].
//! - [`schema`]: JSON Schema from the Rust types, in OpenAI strict form;
//!   [`conformance`]: every problem of a JSON value against such a schema.
//! - [`policy`]: a tenant's limits for its agents (the document, its
//!   schema and strict parsing, the limits that apply to a branch).
//! - [`validation`]: strict parsing + `validator` rules → `VALIDATION_ERROR`
//!   with JSON paths; strict dates.
//! - [`identity`]: the verified [`identity::Caller`] and its identifiers.
//! - [`error`]: [`ToolError`], its codes, statuses and retry flags.
//! - [`erp`]: the ERP port's errors ([`erp::ErpError`]): facts a backend
//!   reports, which only [`ToolError::from`] words for a model.
//! - [`request`]: the executor's headers as a tool sees them ([`request::AgentContext`]).
//! - [`cursor`]: opaque pagination cursors, sealed and bound to the caller.
//! - [`canonical`]: canonical JSON and the fingerprint (property-tested).
//! - [`clock`]: time, injected.
//! - [`settings`]: the layered source every owner of a setting parses its
//!   own part from, [`settings::Secret`] and [`settings::ConfigError`].
//! - [`crypto`]: the process's one crypto provider (*ring*), for TLS and JWTs.
//! - [`store`]: the store-neutral write set a backend's document writes and
//!   a decision cross the ERP port as (only `draftline-dynamo` turns it
//!   into DynamoDB requests).

#![warn(missing_docs)]

pub mod canonical;
pub mod clock;
pub mod conformance;
pub mod crypto;
pub mod cursor;
pub mod erp;
pub mod error;
pub mod identity;
pub mod policy;
pub mod request;
pub mod schema;
pub mod settings;
pub mod store;
pub mod tool;
pub mod validation;

pub use erp::{ErpError, Refusal};
pub use error::{ErrorCode, FieldIssue, ToolError};
pub use tool::{Call, Draft, DraftTool, ReadTool, Registered, Registry, Tier, ToolMeta, ToolSpec};

/// Re-exports the tool crates need, so they build against the same versions.
pub mod deps {
    pub use schemars;
    pub use validator;
}
