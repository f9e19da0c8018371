//! The edge: where a request enters and what is decided there, once.
//!
//! - The request id is minted once ([`crate::request::request_id`]) by the
//!   endpoint that receives the request, and handed down.
//! - [`origin`]: DNS rebinding protection for every endpoint that acts for
//!   a signed-in caller (tool functions, the tool list, MCP).
//! - Authentication is decided once per request ([`crate::App::identify`])
//!   and its result travels in an [`crate::pipeline::Entry`]; the pipeline
//!   and the MCP endpoint never verify a token again.

pub mod origin;

use std::time::Duration;

use http::request::Parts;

use crate::error::ToolError;

/// How long the platform still lets this invocation run, when it says
/// (Lambda's context deadline). An adapter puts it into the request's
/// extensions; the pipeline keeps each call's deadline inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLeft(pub Duration);

/// The origin check as a contract error.
pub fn check_origin(parts: &Parts, resource: &str) -> Result<(), ToolError> {
    origin::check(parts, resource).map_err(|reason| {
        ToolError::ForeignOrigin(format!(
            "Forbidden: {reason}. This server refuses cross-site requests (DNS rebinding protection). Nothing \
             was read or written. Call it from a server-side client, or from a page of this deployment's own origin."
        ))
    })
}
