//! The edge: where a request enters and what is decided there, once.
//!
//! Every runtime (Vercel, Lambda, the local server) hands each request to
//! [`Admitted::new`] before anything else, whatever the endpoint. There,
//! in this one order:
//!
//! 1. the request id is minted ([`Admitted::request_id`]: the caller's
//!    valid `X-Request-Id`, else the platform's, else a new ULID), the one
//!    place any request id is made;
//! 2. the origin and host check ([`origin`], DNS rebinding protection) is
//!    decided ([`Admitted::origin`]); every endpoint that acts for a caller
//!    (tool functions, the tool list, MCP, the review pages) refuses on it
//!    before it reads anything else;
//!    The W3C trace context it continues is read too
//!    ([`trace`], [`Admitted::trace`]): a malformed one is ignored;
//! 3. identity, where the route needs it, is decided once per request
//!    ([`crate::App::identify`]) and travels in an
//!    [`crate::pipeline::Entry`]: the pipeline and MCP `tools/call` never
//!    verify a token again.

pub mod origin;
/// The W3C trace context a call continues, and where its time went
/// (`draftline-http`, where every outgoing request records itself).
pub use draftline_http::trace;

use std::time::Duration;

use bytes::Bytes;
use draftline_contract::ToolError;
use http::request::Parts;
use http::{HeaderMap, Request};

use crate::idempotency::IdempotencyKey;
use trace::TraceContext;

/// How long the platform still lets this invocation run, when it says
/// (Lambda's context deadline). An adapter puts it into the request's
/// extensions; the pipeline keeps each call's deadline inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLeft(pub Duration);

/// A request that passed the edge: its id and the origin verdict, decided
/// once, and the request itself.
#[derive(Debug)]
pub struct Admitted {
    request_id: String,
    /// Why the origin and host check refused it, if it did.
    refused: Option<String>,
    /// The trace the request continues (`traceparent`), else a fresh one.
    pub trace: TraceContext,
    /// The request line and headers.
    pub parts: Parts,
    /// The body (bounded by the adapter).
    pub body: Bytes,
}

impl Admitted {
    /// Admits `request` to the deployment at `resource`.
    pub fn new(request: Request<Bytes>, resource: &str) -> Self {
        Self::with_platform_id(request, resource, None)
    }

    /// Admits `request`, naming it by `platform_id` (Lambda's request id)
    /// when the caller sent no valid `X-Request-Id`, so the log line, the
    /// audit item and the platform's own logs agree.
    pub fn with_platform_id(request: Request<Bytes>, resource: &str, platform_id: Option<String>) -> Self {
        let (parts, body) = request.into_parts();
        let request_id = caller_request_id(&parts.headers)
            .or(platform_id.filter(|id| valid_request_id(id)))
            .unwrap_or_else(|| ulid::Ulid::new().to_string());
        let refused = origin::check(&parts, resource).err();
        let trace = TraceContext::of_headers(&parts.headers);
        Self {
            request_id,
            refused,
            trace,
            parts,
            body,
        }
    }

    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// The origin and host check: `Err` for a request this deployment
    /// refuses (another site's origin, a rebound host name).
    pub fn origin(&self) -> Result<(), ToolError> {
        match &self.refused {
            None => Ok(()),
            Some(reason) => Err(foreign_origin(reason)),
        }
    }

    /// The trace the request belongs to: the caller's `traceparent`, if
    /// valid, else a fresh trace.
    pub fn trace(&self) -> &TraceContext {
        &self.trace
    }

    /// Why the origin and host check refused the request, in words, if it did.
    pub fn origin_refusal(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// How long the platform still lets the invocation run, if it says.
    pub fn time_left(&self) -> Option<Duration> {
        self.parts.extensions.get::<TimeLeft>().map(|left| left.0)
    }

    /// The request again (for handlers that read it whole), and its id.
    pub fn into_request(self) -> (Request<Bytes>, String) {
        (Request::from_parts(self.parts, self.body), self.request_id)
    }
}

/// The contract error of a request refused by the origin check.
fn foreign_origin(reason: &str) -> ToolError {
    ToolError::ForeignOrigin(format!(
        "Forbidden: {reason}. This server refuses cross-site requests (DNS rebinding protection). Nothing \
         was read or written. Call it from a server-side client, or from a page of this deployment's own origin."
    ))
}

/// Whether `id` may name a request: 1-64 of `[A-Za-z0-9._-]`.
fn valid_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The caller's `X-Request-Id`, if it may name the request.
fn caller_request_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| valid_request_id(v))
        .map(str::to_owned)
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

    fn admitted(request_id: Option<&str>, platform: Option<&str>) -> Admitted {
        let mut request = Request::post("/api/x");
        if let Some(id) = request_id {
            request = request.header("x-request-id", id);
        }
        Admitted::with_platform_id(
            request.body(Bytes::new()).unwrap(),
            "https://tools.example.com",
            platform.map(str::to_owned),
        )
    }

    #[test]
    fn a_safe_request_id_is_kept_then_the_platforms_and_an_unsafe_one_replaced() {
        assert_eq!(
            admitted(Some("abc-123_x.y"), Some("lambda-1")).request_id(),
            "abc-123_x.y"
        );
        assert_eq!(admitted(Some("a b<script>"), Some("lambda-1")).request_id(), "lambda-1");
        let minted = admitted(Some("a b<script>"), None);
        assert_ne!(minted.request_id(), "a b<script>");
        assert_eq!(minted.request_id().len(), 26);
        assert_eq!(admitted(None, Some("bad id!")).request_id().len(), 26);
        assert!(minted.origin().is_ok(), "no Origin header: not a browser");
    }
}
