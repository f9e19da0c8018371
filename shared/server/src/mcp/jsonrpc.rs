//! JSON-RPC 2.0 as MCP carries it over Streamable HTTP: one message per POST
//! (batches were removed in 2025-06-18 and stay removed), requests and
//! notifications in, exactly one response (or none) out.
//!
//! [`parse`] reads a body into a [`Message`] or the protocol error that
//! answers it (`-32700` for bytes that are not JSON, `-32600` for JSON that
//! is not a single well-formed request or notification). The wire types of
//! the answers are `rmcp`'s ([`JsonRpcResponse`], [`JsonRpcError`],
//! [`ErrorData`], [`RequestId`]), so what we send is what the official SDK
//! models.

use http::StatusCode;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcResponse, JsonRpcVersion2_0, NumberOrString, RequestId};
use serde_json::{Map, Value};

/// draftline's code for a request without valid credentials (HTTP 401).
/// MCP asks for application codes outside the range JSON-RPC reserves
/// (-32768 to -32000); this one reads as "401".
pub const UNAUTHENTICATED: ErrorCode = ErrorCode(-31401);

/// draftline's code for a request refused for its `Origin` or `Host` (HTTP 403).
pub const FORBIDDEN_ORIGIN: ErrorCode = ErrorCode(-31403);

/// One incoming JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it gets exactly one response.
    Request {
        /// Its id (never null in MCP).
        id: RequestId,
        method: String,
        /// The parameters (`None` when absent).
        params: Option<Map<String, Value>>,
    },
    /// A notification: it gets HTTP 202 and no body.
    Notification { method: String },
}

impl Message {
    /// The method called.
    pub fn method(&self) -> &str {
        match self {
            Self::Request { method, .. } | Self::Notification { method } => method,
        }
    }

    /// The request id, for requests.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Request { id, .. } => Some(id),
            Self::Notification { .. } => None,
        }
    }

    /// The parameters of a request (notifications' parameters are never read).
    pub fn params(&self) -> Option<&Map<String, Value>> {
        match self {
            Self::Request { params, .. } => params.as_ref(),
            Self::Notification { .. } => None,
        }
    }
}

/// A JSON-RPC error to send, with the HTTP status it travels with.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError {
    /// The HTTP status of the response.
    pub status: StatusCode,
    /// The request id, when it could be read.
    pub id: Option<RequestId>,
    /// The error object (boxed: it is large and mostly travels in `Err`).
    pub error: Box<ErrorData>,
}

impl ProtocolError {
    /// An error with `code`, `message` and optional `data`.
    pub fn new(status: StatusCode, id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            id,
            error: Box::new(ErrorData::new(code, message.into(), None)),
        }
    }

    /// Adds `data` to the error object.
    pub fn with_data(mut self, data: Value) -> Self {
        self.error.data = Some(data);
        self
    }

    /// `-32600`: the message is not a valid request (HTTP 400).
    pub fn invalid_request(id: Option<RequestId>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, id, ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32602` with HTTP `status`.
    pub fn invalid_params(status: StatusCode, id: Option<RequestId>, message: impl Into<String>) -> Self {
        Self::new(status, id, ErrorCode::INVALID_PARAMS, message)
    }

    /// The JSON body of this error.
    pub fn body(&self) -> Value {
        error_body(self.id.clone(), (*self.error).clone())
    }
}

/// Reads one JSON-RPC message from `body`.
pub fn parse(body: &[u8]) -> Result<Message, ProtocolError> {
    let value: Value = serde_json::from_slice(body).map_err(|err| {
        ProtocolError::new(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::PARSE_ERROR,
            format!(
                "Parse error: the body is not valid JSON (line {}, column {}). Send one JSON-RPC 2.0 object per POST.",
                err.line(),
                err.column()
            ),
        )
    })?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(ProtocolError::invalid_request(
                None,
                "Invalid Request: JSON-RPC batches are not supported (MCP removed batching); send one message per POST.",
            ));
        }
        _ => {
            return Err(ProtocolError::invalid_request(
                None,
                "Invalid Request: the body must be one JSON-RPC 2.0 object.",
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => Some(request_id(raw).ok_or_else(|| {
            ProtocolError::invalid_request(
                None,
                "Invalid Request: 'id' must be a string or an integer (MCP forbids null ids).",
            )
        })?),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(ProtocolError::invalid_request(
            id,
            "Invalid Request: 'jsonrpc' must be \"2.0\".",
        ));
    }
    let Some(method) = object.get("method") else {
        let message = if object.contains_key("result") || object.contains_key("error") {
            "Invalid Request: this server sends no requests, so it accepts no JSON-RPC responses."
        } else {
            "Invalid Request: a request or notification needs a 'method'."
        };
        return Err(ProtocolError::invalid_request(id, message));
    };
    let Some(method) = method.as_str().map(str::to_owned) else {
        return Err(ProtocolError::invalid_request(
            id,
            "Invalid Request: 'method' must be a string.",
        ));
    };
    let params = match object.get("params") {
        None => None,
        Some(Value::Object(params)) => Some(params.clone()),
        Some(_) => {
            return Err(ProtocolError::invalid_params(
                StatusCode::BAD_REQUEST,
                id,
                "Invalid params: 'params' must be a JSON object.",
            ));
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method },
    })
}

fn request_id(raw: &Value) -> Option<RequestId> {
    match raw {
        Value::String(text) => Some(NumberOrString::String(text.as_str().into())),
        Value::Number(number) => number.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The body of a successful response.
pub fn result_body(id: RequestId, result: Value) -> Value {
    encode(&JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result,
    })
}

/// The body of an error response.
pub fn error_body(id: Option<RequestId>, error: ErrorData) -> Value {
    encode(&JsonRpcError::new(id, error))
}

/// Serializes a wire type. These types serialize infallibly (string keys,
/// no maps with non-string keys); the fallback keeps a bug from panicking.
pub(crate) fn encode(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|err| {
        tracing::error!(error = %err, "an MCP message could not be serialized");
        serde_json::json!({
            "jsonrpc": "2.0",
            "error": {"code": ErrorCode::INTERNAL_ERROR.0, "message": "Internal error"}
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(result: Result<Message, ProtocolError>) -> i32 {
        result.expect_err("an error").error.code.0
    }

    #[test]
    fn a_request_and_a_notification_are_told_apart_by_the_id() {
        let request = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert_eq!(request.id(), Some(&NumberOrString::Number(7)));
        assert_eq!(request.method(), "ping");
        let note = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(note.id(), None);
        let string_id = parse(br#"{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{}}"#).unwrap();
        assert_eq!(string_id.id(), Some(&NumberOrString::String("a-1".into())));
        assert_eq!(string_id.params(), Some(&Map::new()));
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_codes() {
        assert_eq!(code(parse(b"{not json")), -32700);
        assert_eq!(code(parse(b"")), -32700);
        assert_eq!(code(parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)), -32600);
        assert_eq!(code(parse(b"42")), -32600);
        assert_eq!(code(parse(br#"{"id":1,"method":"ping"}"#)), -32600);
        assert_eq!(code(parse(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#)), -32600);
        assert_eq!(code(parse(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)), -32600);
        assert_eq!(code(parse(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#)), -32600);
        assert_eq!(code(parse(br#"{"jsonrpc":"2.0","id":1,"method":3}"#)), -32600);
        assert_eq!(code(parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)), -32600);
        assert_eq!(
            code(parse(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#)),
            -32602
        );
    }

    #[test]
    fn the_id_is_echoed_in_errors_when_it_could_be_read() {
        let err = parse(br#"{"jsonrpc":"1.0","id":"r-9","method":"ping"}"#).unwrap_err();
        assert_eq!(err.body()["id"], json!("r-9"));
        let err = parse(b"{").unwrap_err();
        assert!(err.body().get("id").is_none());
    }

    #[test]
    fn bodies_are_json_rpc_2() {
        assert_eq!(
            result_body(NumberOrString::Number(1), json!({})),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        let error = ProtocolError::invalid_request(None, "x").body();
        assert_eq!(
            error,
            json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}})
        );
    }
}
