//! What the executor tells us in headers: request id, agent run and tool
//! call ids, model and prompt version, and the direct caller's
//! `Idempotency-Key` (DESIGN.md, request headers).

use http::HeaderMap;
use serde::Serialize;

use crate::error::ToolError;
use crate::idempotency::IdempotencyKey;

/// Which agent run, tool call, model and prompt a call belongs to. All optional:
/// a person calling with curl sends none of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AgentContext {
    /// `X-Agent-Run-Id`.
    pub run_id: Option<String>,
    /// `X-Tool-Call-Id`.
    pub tool_call_id: Option<String>,
    /// `X-Agent-Model`.
    pub model: Option<String>,
    /// `X-Prompt-Version`.
    pub prompt_version: Option<String>,
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

fn id_header(headers: &HeaderMap, name: &'static str) -> Result<Option<String>, ToolError> {
    let Some(raw) = headers.get(name) else {
        return Ok(None);
    };
    let value = raw.to_str().unwrap_or_default().trim();
    let valid = !value.is_empty()
        && value.len() <= 128
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'));
    if valid {
        Ok(Some(value.to_owned()))
    } else {
        Err(ToolError::invalid(
            format!("header:{name}"),
            format!(
                "the {name} header must be 1-128 characters of letters, digits, '.', '_', '-', ':'. \
                 Nothing was created or changed."
            ),
        ))
    }
}

/// A free-text audit header: printable ASCII, at most 128 characters, or dropped.
fn label_header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty() && v.bytes().all(|b| (0x20..0x7f).contains(&b)))
        .map(|v| v.chars().take(128).collect())
}

impl AgentContext {
    /// Reads the agent headers. A malformed run or tool-call id is an error,
    /// because the run id may become part of an idempotency key.
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, ToolError> {
        Ok(Self {
            run_id: id_header(headers, "x-agent-run-id")?,
            tool_call_id: id_header(headers, "x-tool-call-id")?,
            model: label_header(headers, "x-agent-model"),
            prompt_version: label_header(headers, "x-prompt-version"),
        })
    }
}

/// The `Idempotency-Key` header, parsed; `None` when absent.
pub fn idempotency_header(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, ToolError> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = raw.to_str().unwrap_or("\u{0}");
    IdempotencyKey::parse_header(text).map(Some).map_err(|reason| {
        ToolError::invalid(
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
