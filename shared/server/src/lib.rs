//! # draftline-server
//!
//! The machinery around draftline's tools: one pipeline for every call, and
//! the ways calls arrive and leave. Tools come from `draftline-erp` (through
//! a [`draftline_contract::Registry`]); state lives in DynamoDB through
//! `draftline-dynamo`.
//!
//! ## Layout
//! - [`edge`]: what is decided once where a request enters (request id,
//!   origin check, authentication, the idempotency header).
//! - [`pipeline`]: [`pipeline::App`], the one request path: scope, budget,
//!   parse, idempotency, execute (atomic drafts in one transaction, external
//!   drafts under a lease), audit, respond, all within a call deadline.
//! - [`auth`]: JWT verification (HS256 secret, RS256/ES256 via JWKS), token
//!   minting for local use.
//! - [`idempotency`]: keys, records, the transaction and the lease.
//! - [`audit`]: the audit record of every call, built once from its outcome;
//!   [`anonymous`]: the bounded trace of calls refused before anyone was
//!   identified.
//! - [`policy`]: the tenant's limits for its agents: stored, cached for a
//!   bounded time, and counted in the draft's own transaction; and the
//!   gate that refuses by them and by the opt-in per-caller call budget
//!   (`429 RATE_LIMITED`, `DRAFTLINE_RATE_LIMIT_PER_MINUTE`).
//! - [`response`]: the envelope and headers, built in one place.
//! - [`listing`]: the caller's tool list as MCP, OpenAI, AI SDK and OpenAPI.
//! - [`mcp`]: the stateless MCP endpoint (Streamable HTTP, JSON responses).
//! - [`runtime`]: Vercel, AWS Lambda and local-server adapters.
//! - [`pages`]: the seam for pages served next to the tools (the review
//!   pages plug in here; the server does not depend on them).
//! - [`export`]: each call as OpenTelemetry spans over OTLP/HTTP (`OTEL_*`;
//!   off without an endpoint).
//! - [`config`] (the server's own settings, from the layered
//!   [`draftline_contract::settings::Source`]), [`observe`] (logs).

pub mod anonymous;
pub mod audit;
pub mod auth;
pub mod config;
pub mod confirm;
pub mod edge;
pub mod events;
pub mod export;
pub mod idempotency;
pub mod listing;
pub mod mcp;
pub mod observe;
pub mod pages;
pub mod pipeline;
pub mod policy;
pub mod response;
pub mod runtime;
pub mod storage;

pub use pipeline::App;

/// What the unit tests of this crate share.
#[cfg(test)]
pub(crate) mod testing {
    use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};

    /// A verified caller: `user` of `branch` (`SBY-01`: code `SBY`) in
    /// `tenant`, granted `scopes`.
    pub fn caller(tenant: &str, branch: &str, user: &str, scopes: &str) -> Caller {
        let code = branch.split('-').next().unwrap_or(branch);
        Caller::from_verified(
            TenantId::parse(tenant).unwrap(),
            BranchId::parse(branch).unwrap(),
            BranchCode::parse(code).unwrap(),
            UserId::parse(user).unwrap(),
            vec![],
            Scopes::from_claim(scopes),
        )
    }
}

// The functions and the CLI enable the feature; see Cargo.toml.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
