//! # The MCP endpoint
//!
//! One stateless Streamable HTTP endpoint (`POST /api/mcp`) that serves every
//! tool of the catalogue through the same pipeline as the tool functions. It
//! answers with `application/json` only (never an SSE stream), keeps nothing
//! between requests, and never issues or reads `Mcp-Session-Id`, so it runs
//! unchanged as a scale-to-zero function.
//!
//! It speaks the handshake revisions (2025-11-25 and the two before it:
//! `initialize`, `notifications/initialized`, `ping`, `tools/list`,
//! `tools/call`) and the stateless 2026-07-28 revision (`server/discover`,
//! `tools/list`, `tools/call`, the version in `_meta` and in the
//! `MCP-Protocol-Version` header); see [`versions`].
//!
//! One request, in this order (each step can end it):
//!
//! 1. [`origin`]: a foreign `Origin` (or, locally, `Host`) → 403;
//! 2. anything but `POST` → 405 with `Allow: POST`;
//! 3. a body over the limit → 413; an `Accept` without JSON → 406; a
//!    `Content-Type` other than JSON → 415;
//! 4. [`jsonrpc::parse`]: not JSON → -32700, not one request or
//!    notification (a batch, say) → -32600, both HTTP 400;
//! 5. authentication: no valid bearer token → 401 with
//!    `WWW-Authenticate: Bearer resource_metadata="…"`; a `tools/call` is
//!    still run through the pipeline so the denied call is audited;
//! 6. [`versions::classify`] and, for 2026-07-28, [`headers::check`] → 400
//!    with -32020, -32022 or -32602;
//! 7. the method: notifications → 202; [`server`] (`initialize`,
//!    `server/discover`), `ping`, [`tools`] (`tools/list`, `tools/call`);
//!    anything else → -32601 (HTTP 404 in the 2026-07-28 revision).
//!
//! `rmcp`, the official Rust SDK, supplies the wire types (messages, errors,
//! results, versions). Its Streamable HTTP server is not used: it runs each
//! request on a spawned service that must own (`'static`) the application,
//! while this endpoint is one function from `&App` and a request to a
//! response, like every other function of the pipeline, and must decide 401s
//! and audit denied calls before any protocol handling.

pub mod headers;
pub mod jsonrpc;
pub mod server;
pub mod tools;
pub mod versions;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use rmcp::model::{ErrorCode, RequestId};
use serde_json::{Value, json};

use crate::edge::Admitted;
use crate::pipeline::{App, Entry, Transport};
use crate::response;
use draftline_contract::error::ToolError;
use draftline_contract::validation::MAX_BODY_BYTES;
use jsonrpc::{Message, ProtocolError};
use tools::Called;
use versions::Era;

/// Serves one HTTP request to the MCP endpoint.
pub async fn handle(app: &App, request: Admitted) -> Response<Bytes> {
    if let Some(reason) = request.origin_refusal() {
        let error = ProtocolError::new(
            StatusCode::FORBIDDEN,
            None,
            jsonrpc::FORBIDDEN_ORIGIN,
            format!("Forbidden: {reason}. The MCP endpoint refuses cross-site requests (DNS rebinding protection)."),
        );
        return finish(error_response(&error, request.request_id()), "-", request.request_id());
    }
    let time_left = request.time_left();
    let trace = request.trace().clone();
    let (request, request_id) = request.into_request();
    let (parts, body) = request.into_parts();
    if parts.method != Method::POST {
        let error = ProtocolError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Method Not Allowed: the MCP endpoint takes JSON-RPC messages by POST only; {} is not served \
                 (this server keeps no sessions and opens no SSE stream).",
                parts.method
            ),
        );
        let mut response = error_response(&error, &request_id);
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return finish(response, "-", &request_id);
    }
    if let Some(error) = refuse_transport(&parts.headers, &body) {
        return finish(error_response(&error, &request_id), "-", &request_id);
    }
    let message = match jsonrpc::parse(&body) {
        Ok(message) => message,
        Err(error) => return finish(error_response(&error, &request_id), "-", &request_id),
    };
    let identifying = std::time::Instant::now();
    let identity = app.identify(&parts.headers).await;
    let identified_in = identifying.elapsed();
    let entry = Entry {
        request_id: &request_id,
        headers: &parts.headers,
        identity: &identity,
        transport: Transport::Mcp,
        time_left,
        answer: None,
        trace: &trace,
        identified_in,
    };
    let response = respond(app, &entry, &message).await;
    finish(response, message.method(), &request_id)
}

/// Steps 5 to 7 for a parsed message.
async fn respond(app: &App, entry: &Entry<'_>, message: &Message) -> Response<Bytes> {
    let (headers, request_id) = (entry.headers, entry.request_id);
    let caller = match entry.identity {
        Ok(caller) => caller,
        Err(error) => {
            if let Message::Request { id, method, params } = message
                && method == "tools/call"
                && tools::called_name(params.as_ref()).is_some()
            {
                // The pipeline fails at the same step and records the
                // refused call (rule 7: every call is audited).
                let called = tools::call(app, entry, id, params.as_ref()).await;
                return called_response(app, id, called, false, request_id);
            }
            return unauthenticated(app, message.id().cloned(), error, request_id);
        }
    };
    let era = match versions::classify(headers, message) {
        Ok(era) => era,
        Err(error) => return error_response(&error, request_id),
    };
    if era.is_modern()
        && let Err(error) = headers::check(headers, message)
    {
        return error_response(&error, request_id);
    }
    let Message::Request { id, method, params } = message else {
        return accepted(request_id);
    };
    let modern = era.is_modern();
    let params = params.as_ref();
    let result = match (method.as_str(), &era) {
        ("initialize", Era::Legacy(_)) => match params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str) {
            Some(requested) => Ok(server::initialize_result(requested)),
            None => Err(ProtocolError::invalid_params(
                StatusCode::OK,
                Some(id.clone()),
                "Invalid params: initialize needs 'protocolVersion', the version the client speaks.",
            )),
        },
        ("ping", Era::Legacy(_)) => Ok(json!({})),
        ("server/discover", _) => Ok(server::discover_result()),
        ("tools/list", _) => tools::list(app, caller, id, params),
        ("tools/call", _) => {
            let called = tools::call(app, entry, id, params).await;
            return called_response(app, id, called, modern, request_id);
        }
        _ => Err(method_not_found(id, method, &era)),
    };
    match result {
        Ok(result) => result_response(id, server::finish(modern, result), request_id),
        Err(error) => error_response(&error, request_id),
    }
}

/// Step 3: what the transport cannot take.
fn refuse_transport(headers: &HeaderMap, body: &Bytes) -> Option<ProtocolError> {
    if body.len() > MAX_BODY_BYTES {
        return Some(ProtocolError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: the body is over the limit of {MAX_BODY_BYTES} bytes."),
        ));
    }
    if !accepts_json(headers) {
        return Some(ProtocolError::new(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "Not Acceptable: this endpoint answers with application/json; send \
             'Accept: application/json, text/event-stream'.",
        ));
    }
    if !is_json(headers) {
        return Some(ProtocolError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            "Unsupported Media Type: send the JSON-RPC message with 'Content-Type: application/json'.",
        ));
    }
    None
}

/// Whether the client takes a JSON answer (no `Accept` at all means anything).
fn accepts_json(headers: &HeaderMap) -> bool {
    let mut ranges = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .peekable();
    if ranges.peek().is_none() {
        return headers.get(header::ACCEPT).is_none();
    }
    ranges.any(|range| {
        let mut pieces = range.split(';');
        let essence = pieces.next().unwrap_or_default().trim().to_ascii_lowercase();
        let refused = pieces.any(|param| {
            param
                .trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused && matches!(essence.as_str(), "application/json" | "application/*" | "*/*")
    })
}

/// Whether the body is declared JSON (an undeclared body is read as JSON).
fn is_json(headers: &HeaderMap) -> bool {
    match headers.get(header::CONTENT_TYPE) {
        None => true,
        Some(value) => value.to_str().is_ok_and(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        }),
    }
}

fn method_not_found(id: &RequestId, method: &str, era: &Era) -> ProtocolError {
    let shown: String = method.chars().take(64).collect();
    let (status, available) = match era {
        // 2026-07-28: an unimplemented method is HTTP 404, so a client can
        // tell it from a legacy server's plain 404.
        Era::Modern => (StatusCode::NOT_FOUND, "server/discover, tools/list, tools/call"),
        Era::Legacy(_) => (StatusCode::OK, "initialize, ping, tools/list, tools/call"),
    };
    ProtocolError::new(
        status,
        Some(id.clone()),
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: '{shown}'. This server offers tools only: {available}."),
    )
}

/// The HTTP response of a `tools/call` with JSON-RPC id `id`.
fn called_response(app: &App, id: &RequestId, called: Called, modern: bool, request_id: &str) -> Response<Bytes> {
    match called {
        Called::Result { result, request_id } => result_response(id, server::finish(modern, result), &request_id),
        Called::Protocol {
            error,
            request_id: invoked,
        } => error_response(&error, invoked.as_deref().unwrap_or(request_id)),
        Called::Unauthenticated { error, request_id } => unauthenticated(app, Some(id.clone()), &error, &request_id),
    }
}

fn result_response(id: &RequestId, result: Value, request_id: &str) -> Response<Bytes> {
    response::json(StatusCode::OK, &jsonrpc::result_body(id.clone(), result), request_id)
}

fn error_response(error: &ProtocolError, request_id: &str) -> Response<Bytes> {
    response::json(error.status, &error.body(), request_id)
}

/// 202 Accepted, no body: what a notification gets.
fn accepted(request_id: &str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::ACCEPTED;
    if let Ok(id) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert("x-request-id", id);
    }
    response
}

/// 401 with the RFC 9728 challenge, so a client can discover how to authenticate.
fn unauthenticated(app: &App, id: Option<RequestId>, error: &ToolError, request_id: &str) -> Response<Bytes> {
    let body = ProtocolError::new(
        StatusCode::UNAUTHORIZED,
        id,
        jsonrpc::UNAUTHENTICATED,
        error.public_message(),
    )
    .with_data(response::error_object(error));
    let mut response = error_response(&body, request_id);
    if let Some(challenge) = response::challenge(error, &app.resource_metadata_url())
        .and_then(|challenge| HeaderValue::from_str(&challenge).ok())
    {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// Logs the request (method and status only: no token, no arguments).
fn finish(response: Response<Bytes>, method: &str, request_id: &str) -> Response<Bytes> {
    let method: String = method.chars().take(64).collect();
    tracing::info!(request_id, method, status = response.status().as_u16(), "mcp request");
    response
}
