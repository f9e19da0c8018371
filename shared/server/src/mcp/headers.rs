//! The request metadata headers of the 2026-07-28 transport (SEP-2243):
//! `Mcp-Method` on every request and `Mcp-Name` on `tools/call`. They mirror
//! the body so that a gateway can route on them; we check that they say what
//! the body says, so that what a gateway saw is what we execute. A missing,
//! repeated or different header is a `HeaderMismatch` (-32020, HTTP 400).
//!
//! Our tools mark no parameter with `x-mcp-header`, so no `Mcp-Param-*`
//! header is expected or read.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, StatusCode};
use rmcp::model::ErrorData;
use serde_json::Value;

use super::jsonrpc::{Message, ProtocolError};

/// The header that mirrors `method`.
pub const MCP_METHOD: &str = "mcp-method";
/// The header that mirrors `params.name` of `tools/call`.
pub const MCP_NAME: &str = "mcp-name";

const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// Checks the standard headers of a modern request against its body.
pub fn check(headers: &HeaderMap, message: &Message) -> Result<(), ProtocolError> {
    let Message::Request { id, method, params } = message else {
        // The revision defines no header rules for notification POSTs.
        return Ok(());
    };
    let fail = |reason: String| ProtocolError {
        status: StatusCode::BAD_REQUEST,
        id: Some(id.clone()),
        error: Box::new(ErrorData::header_mismatch(format!("Header mismatch: {reason}."), None)),
    };
    match single(headers, MCP_METHOD).map_err(&fail)? {
        None => return Err(fail("the Mcp-Method header is missing".to_owned())),
        Some(value) if value != method => {
            return Err(fail(format!(
                "Mcp-Method header '{}' does not match the body's method '{}'",
                clip(value),
                clip(method)
            )));
        }
        Some(_) => {}
    }
    if method == "tools/call"
        && let Some(Value::String(name)) = params.as_ref().and_then(|params| params.get("name"))
    {
        let Some(raw) = single(headers, MCP_NAME).map_err(&fail)? else {
            return Err(fail("the Mcp-Name header is missing".to_owned()));
        };
        let sent = decode(raw).ok_or_else(|| fail("the Mcp-Name header is not valid Base64".to_owned()))?;
        if &sent != name {
            return Err(fail(format!(
                "Mcp-Name header '{}' does not match the body's params.name '{}'",
                clip(&sent),
                clip(name)
            )));
        }
    }
    Ok(())
}

/// The one value of `name`, without the optional whitespace around it
/// (RFC 9110 §5.5); an error if it is repeated or not text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("the {name} header was sent more than once"));
    }
    value
        .to_str()
        .map(|text| Some(text.trim_matches([' ', '\t'])))
        .map_err(|_| format!("the {name} header contains invalid characters"))
}

/// A header value as text: `=?base64?…?=` is Base64 of UTF-8, anything else is literal.
fn decode(raw: &str) -> Option<String> {
    match raw
        .strip_prefix(BASE64_PREFIX)
        .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX))
    {
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(raw.to_owned()),
    }
}

fn clip(value: &str) -> String {
    value.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::parse;
    use http::HeaderValue;
    use serde_json::json;

    fn call(name: &str) -> Message {
        parse(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": {}}})
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    }

    fn with(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn code(result: Result<(), ProtocolError>) -> i32 {
        result.unwrap_err().error.code.0
    }

    #[test]
    fn matching_headers_pass_whatever_their_name_case_and_whitespace() {
        let message = call("inventory_get_stock");
        let headers = with(&[("MCP-METHOD", " tools/call "), ("mcp-name", "\tinventory_get_stock ")]);
        assert!(check(&headers, &message).is_ok());
    }

    #[test]
    fn a_missing_or_different_header_is_a_mismatch() {
        let message = call("inventory_get_stock");
        assert_eq!(code(check(&with(&[]), &message)), -32020);
        assert_eq!(code(check(&with(&[("mcp-method", "tools/call")]), &message)), -32020);
        assert_eq!(
            code(check(
                &with(&[("mcp-method", "TOOLS/CALL"), ("mcp-name", "inventory_get_stock")]),
                &message
            )),
            -32020
        );
        assert_eq!(
            code(check(
                &with(&[("mcp-method", "tools/call"), ("mcp-name", "wrong_tool")]),
                &message
            )),
            -32020
        );
        assert_eq!(
            code(check(
                &with(&[
                    ("mcp-method", "tools/call"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "inventory_get_stock")
                ]),
                &message
            )),
            -32020
        );
    }

    #[test]
    fn a_base64_name_is_decoded_before_it_is_compared() {
        let message = call("inventory_get_stock");
        let encoded = format!("=?base64?{}?=", STANDARD.encode("inventory_get_stock"));
        assert!(check(&with(&[("mcp-method", "tools/call"), ("mcp-name", &encoded)]), &message).is_ok());
        let unpadded = "=?base64?SGVsbG8?=";
        assert_eq!(
            code(check(
                &with(&[("mcp-method", "tools/call"), ("mcp-name", unpadded)]),
                &message
            )),
            -32020
        );
    }
}
