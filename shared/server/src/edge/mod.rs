//! The edge: where a request enters and what is decided there, once.
//!
//! - The request id is minted once ([`request_id`]) by the
//!   endpoint that receives the request, and handed down.
//! - [`origin`]: DNS rebinding protection for every endpoint that acts for
//!   a signed-in caller (tool functions, the tool list, MCP).
//! - Authentication is decided once per request ([`crate::App::identify`])
//!   and its result travels in an [`crate::pipeline::Entry`]; the pipeline
//!   and the MCP endpoint never verify a token again.

pub mod origin;

use std::time::Duration;

use draftline_contract::ToolError;
use http::HeaderMap;
use http::request::Parts;

use crate::idempotency::IdempotencyKey;

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

/// The request id: the caller's `X-Request-Id` if it is 1-64 of
/// `[A-Za-z0-9._-]`, otherwise a new ULID.
pub fn request_id(headers: &HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
        .map(str::to_owned)
        .unwrap_or_else(|| ulid::Ulid::new().to_string())
}

/// The `Idempotency-Key` header, parsed; `None` when absent.
pub fn idempotency_header(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, ToolError> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = raw.to_str().unwrap_or("\u{0}");
    IdempotencyKey::parse_header(text).map(Some).map_err(|reason| {
        ToolError::invalid_schema(
            "header:Idempotency-Key",
            format!("{reason}. Nothing was created or changed. Send a new key of 1-255 printable ASCII characters."),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_safe_request_id_is_kept_and_an_unsafe_one_replaced() {
        let mut headers = HeaderMap::new();
        headers.insert("x-request-id", "abc-123_x.y".parse().unwrap());
        assert_eq!(request_id(&headers), "abc-123_x.y");
        headers.insert("x-request-id", "a b<script>".parse().unwrap());
        assert_ne!(request_id(&headers), "a b<script>");
        assert_eq!(request_id(&headers).len(), 26);
    }
}
