//! The response envelope of the HTTP contract, built in one place.
//!
//! Success: `{"ok":true,"data":…,"replayed":…,"requestId":…}`; error:
//! `{"ok":false,"error":{code,message,retryable,details?,retryAfterSeconds?,limit?},"requestId":…}`,
//! with `WWW-Authenticate` on 401/403 and `Retry-After` on retryable errors.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};

use draftline_contract::error::ToolError;

/// A JSON response with the headers every response carries.
pub fn json(status: StatusCode, body: &Value, request_id: &str) -> Response<Bytes> {
    with_body(status, Bytes::from(body.to_string()), request_id)
}

/// A response of the JSON text `body`, with the headers every response carries.
fn with_body(status: StatusCode, body: Bytes, request_id: &str) -> Response<Bytes> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert("x-request-id", id);
    }
    response
}

/// The success envelope, written from borrowed parts: `json!` would copy
/// the whole `data` tree into a new value first.
#[derive(serde::Serialize)]
struct SuccessEnvelope<'a> {
    ok: bool,
    data: &'a Value,
    replayed: bool,
    #[serde(rename = "requestId")]
    request_id: &'a str,
}

/// A success envelope.
pub fn success(status: StatusCode, data: &Value, replayed: bool, request_id: &str) -> Response<Bytes> {
    let envelope = SuccessEnvelope {
        ok: true,
        data,
        replayed,
        request_id,
    };
    // Serializing borrowed JSON values into a Vec cannot fail.
    let body = serde_json::to_vec(&envelope).unwrap_or_default();
    let mut response = with_body(status, Bytes::from(body), request_id);
    if replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// The error object of the envelope (also used by the MCP endpoint).
pub fn error_object(err: &ToolError) -> Value {
    let mut error = json!({
        "code": err.code().as_str(),
        "message": err.public_message(),
        "retryable": err.retryable(),
    });
    if let Some(details) = err.details() {
        error["details"] = json!(details);
    }
    if let Some(after) = err.retry_after_seconds() {
        error["retryAfterSeconds"] = json!(after);
    }
    if let Some(limit) = err.limit() {
        error["limit"] = json!(limit);
    }
    if let ToolError::InputRequired {
        question,
        request_state,
        ..
    } = err
    {
        let state = request_state.as_deref().unwrap_or_default();
        error["inputRequired"] = json!({
            "question": question.prompt,
            "existing": question.existing,
            "choices": ["create_another", "use_existing"],
            "requestState": state,
            "confirm": {
                "header": "Draftline-Confirm",
                "create_another": format!("create-another {state}"),
                "use_existing": format!("use-existing {state}"),
                "mcp_meta": crate::confirm::META_KEY,
            },
        });
    }
    error
}

/// The `WWW-Authenticate` challenge for 401 and 403 (RFC 6750, RFC 9728).
pub fn challenge(err: &ToolError, resource_metadata: &str) -> Option<String> {
    match err {
        ToolError::Unauthenticated(draftline_contract::error::AuthFailure::Missing) => {
            Some(format!(r#"Bearer resource_metadata="{resource_metadata}""#))
        }
        ToolError::Unauthenticated(_) | ToolError::UnmappedClaim(_) => Some(format!(
            r#"Bearer error="invalid_token", resource_metadata="{resource_metadata}""#
        )),
        ToolError::Forbidden { scope, .. } => Some(format!(
            r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{resource_metadata}""#
        )),
        _ => None,
    }
}

/// An error envelope.
pub fn failure(err: &ToolError, request_id: &str, resource_metadata: &str) -> Response<Bytes> {
    let body = json!({"ok": false, "error": error_object(err), "requestId": request_id});
    let mut response = json(err.status(), &body, request_id);
    let headers = response.headers_mut();
    if let Some(value) = challenge(err, resource_metadata).and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    if let Some(after) = err.retry_after_seconds() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(after));
    }
    response
}

/// `405 Method Not Allowed` with `Allow: allow` and the error envelope
/// (code `VALIDATION_ERROR`: the request, not the server, is wrong).
pub fn method_not_allowed(allow: &'static str, message: String, request_id: &str) -> Response<Bytes> {
    let err = ToolError::invalid_fields(message, Vec::new());
    let body = json!({"ok": false, "error": error_object(&err), "requestId": request_id});
    let mut response = json(StatusCode::METHOD_NOT_ALLOWED, &body, request_id);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_success_envelope_is_the_same_text_as_the_json_value_it_replaced() {
        let data = json!({"number": "PO-SBY-000001", "lines": [{"qty": "10", "note": "a \"quoted\" é"}], "a": null});
        for replayed in [false, true] {
            let response = success(StatusCode::CREATED, &data, replayed, "01REQ");
            let expected = json!({"ok": true, "data": data, "replayed": replayed, "requestId": "01REQ"});
            assert_eq!(response.body().as_ref(), expected.to_string().as_bytes());
            assert_eq!(
                response.headers().get("idempotent-replayed").is_some(),
                replayed,
                "the replay header follows `replayed`"
            );
        }
    }
}
