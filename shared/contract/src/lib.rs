//! # draftline-contract
//!
//! The ERP-agnostic contract every draftline tool obeys. Nothing here knows
//! about purchase orders; `draftline-erp` supplies the tools.
//!
//! ## Layout
//! - [`tool`]: the tool traits ([`tool::ReadTool`], [`tool::DraftTool`]),
//!   definitions, tiers, annotations, and the [`tool::Registry`].
//! - [`schema`]: JSON Schema from the Rust types, in OpenAI strict form.
//! - [`validation`]: strict parsing + `validator` rules → `VALIDATION_ERROR`
//!   with JSON paths.
//! - [`auth`]: JWT verification (HS256 secret, RS256/ES256 via JWKS), token
//!   minting for local use. [`identity`]: the verified [`identity::Caller`].
//! - [`error`]: [`ToolError`], its codes, statuses and retry flags.
//!   [`response`]: the envelope and headers, built in one place.
//! - [`idempotency`]: keys, records, the transaction and the lease.
//!   [`canonical`]: canonical JSON and the fingerprint.
//! - [`edge`]: what is decided once where a request enters (request id,
//!   origin check, authentication).
//! - [`audit`]: the audit record of every call, built once from its outcome;
//!   [`anonymous`]: the bounded trace of calls refused before anyone was
//!   identified. [`budget`]: the opt-in per-caller call budget (`429 RATE_LIMITED`).
//! - [`pipeline`]: [`pipeline::App`], the one request path.
//! - [`listing`]: the caller's tool list as MCP, OpenAI, AI SDK and OpenAPI.
//! - [`mcp`]: the stateless MCP endpoint (Streamable HTTP, JSON responses).
//! - [`runtime`]: Vercel, AWS Lambda and local-server adapters.
//! - [`dynamo`]: the DynamoDB client seam and round-trip counting.
//!   [`cursor`]: opaque pagination cursors, sealed and bound to the caller.
//! - [`config`], [`clock`], [`request`] (executor headers), [`observe`] (logs).

pub mod anonymous;
pub mod audit;
pub mod auth;
pub mod budget;
pub mod canonical;
pub mod clock;
pub mod config;
pub mod cursor;
pub mod dynamo;
pub mod edge;
pub mod error;
pub mod idempotency;
pub mod identity;
pub mod listing;
pub mod mcp;
pub mod observe;
pub mod pipeline;
pub mod request;
pub mod response;
pub mod runtime;
pub mod schema;
pub mod tool;
pub mod validation;

pub use error::{ErrorCode, FieldIssue, ToolError};
pub use pipeline::App;
pub use tool::{Call, Draft, DraftTool, ReadTool, Registered, Registry, Tier, ToolMeta, ToolSpec};

/// Re-exports the tool crates need, so they build against the same versions.
pub mod deps {
    pub use aws_sdk_dynamodb;
    pub use schemars;
    pub use validator;
}
