//! Protocol versions: which ones the endpoint speaks, how a request says
//! which one it uses, and the checks the stateless 2026-07-28 revision puts
//! on that.
//!
//! Two eras share the one endpoint (a "dual-era" server in the words of the
//! 2026-07-28 versioning page):
//!
//! - **Modern** (2026-07-28): every request carries its version in
//!   `params._meta["io.modelcontextprotocol/protocolVersion"]` and the same
//!   value in the `MCP-Protocol-Version` header; there is no handshake.
//! - **Legacy** (2025-11-25, 2025-06-18, 2025-03-26): `initialize` names a
//!   version and later requests repeat it in the header (absent means
//!   2025-03-26). We keep no session, so every legacy request stands alone too.
//!
//! [`classify`] decides the era of one message or says why it cannot be
//! served: `HeaderMismatch` (-32020), `UnsupportedProtocolVersion` (-32022)
//! or a malformed `_meta` (-32602), all with HTTP 400.

use http::{HeaderMap, StatusCode};
use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion, RequestId, RequestMetaObject};
use serde_json::{Value, json};

use super::jsonrpc::{Message, ProtocolError};

/// The stateless revision.
pub const MODERN: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The handshake revisions we answer, newest first.
pub const LEGACY: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_03_26,
];

/// What a legacy request without the header speaks (2025-06-18 transport rule).
pub const LEGACY_DEFAULT: ProtocolVersion = ProtocolVersion::V_2025_03_26;

/// The HTTP header that carries the version.
pub const HEADER: &str = "mcp-protocol-version";

/// The `_meta` key that carries the version of a modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Every version the endpoint speaks, newest first.
pub fn supported() -> Vec<ProtocolVersion> {
    std::iter::once(MODERN).chain(LEGACY).collect()
}

/// The era a message is served in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// A handshake revision; the version the request speaks.
    Legacy(ProtocolVersion),
    /// The stateless 2026-07-28 revision.
    Modern,
}

impl Era {
    /// Whether this is the stateless revision.
    pub fn is_modern(&self) -> bool {
        matches!(self, Self::Modern)
    }
}

/// The version an `initialize` request gets: the one it asked for if we
/// speak it as a handshake revision, else our newest handshake revision
/// (2025-11-25 lifecycle: "respond with another protocol version it
/// supports … the latest"). `initialize` never selects the modern era.
pub fn negotiate(requested: &str) -> ProtocolVersion {
    let [newest, ..] = LEGACY;
    LEGACY
        .into_iter()
        .find(|version| version.as_str() == requested)
        .unwrap_or(newest)
}

/// Decides the era of `message` from its `_meta` and the version header.
pub fn classify(headers: &HeaderMap, message: &Message) -> Result<Era, ProtocolError> {
    let id = message.id().cloned();
    let header = header_version(headers).map_err(|reason| mismatch(id.clone(), reason))?;
    if let Message::Notification { .. } = message {
        // Notifications carry no required `_meta`; the header alone decides.
        return match header {
            None => Ok(Era::Legacy(LEGACY_DEFAULT)),
            Some(version) => era_of(version).ok_or_else(|| unsupported(id, version)),
        };
    }
    let meta = message.params().and_then(|params| params.get("_meta"));
    let meta_version = match meta.and_then(|meta| meta.get(META_PROTOCOL_VERSION)) {
        None => None,
        Some(Value::String(version)) => Some(version.as_str()),
        Some(_) => {
            return Err(malformed_meta(
                id,
                &format!("_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"),
            ));
        }
    };
    if meta_version.is_none() && message.method() == "initialize" {
        // The handshake names its version in params; whatever header a
        // dual-era client sent with it, it selects the legacy era.
        return Ok(Era::Legacy(LEGACY_DEFAULT));
    }
    let is_discover = message.method() == "server/discover";
    match (meta_version, header) {
        (Some(_), None) => Err(mismatch(
            id,
            "the request names its protocol version in _meta but sends no MCP-Protocol-Version header; \
             send the same value in both"
                .to_owned(),
        )),
        (Some(in_meta), Some(in_header)) if in_meta != in_header => Err(mismatch(
            id,
            format!(
                "MCP-Protocol-Version header '{}' does not match _meta[\"{META_PROTOCOL_VERSION}\"] '{}'",
                clip(in_header),
                clip(in_meta)
            ),
        )),
        (Some(version), Some(_)) => match era_of(version) {
            Some(Era::Modern) => {
                require_modern_meta(id, meta)?;
                Ok(Era::Modern)
            }
            Some(legacy) => Ok(legacy),
            None => Err(unsupported(id, version)),
        },
        (None, Some(version)) => match era_of(version) {
            None => Err(unsupported(id, version)),
            Some(Era::Modern) => Err(malformed_meta(
                id,
                &format!(
                    "a request with MCP-Protocol-Version {MODERN} carries its version and client capabilities \
                     in _meta (\"{META_PROTOCOL_VERSION}\" is missing)"
                ),
            )),
            Some(_) if is_discover => Err(missing_discover_meta(id)),
            Some(legacy) => Ok(legacy),
        },
        (None, None) if is_discover => Err(missing_discover_meta(id)),
        (None, None) => Ok(Era::Legacy(LEGACY_DEFAULT)),
    }
}

/// The era a version number belongs to, if we speak it.
fn era_of(version: &str) -> Option<Era> {
    if version == MODERN.as_str() {
        return Some(Era::Modern);
    }
    LEGACY
        .into_iter()
        .find(|legacy| legacy.as_str() == version)
        .map(Era::Legacy)
}

/// The single `MCP-Protocol-Version` value, trimmed of optional whitespace.
fn header_version(headers: &HeaderMap) -> Result<Option<&str>, String> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("the MCP-Protocol-Version header was sent more than once".to_owned());
    }
    value
        .to_str()
        .map(|text| Some(text.trim()))
        .map_err(|_| "the MCP-Protocol-Version header contains invalid characters".to_owned())
}

/// The required per-request fields of a modern request are present.
fn require_modern_meta(id: Option<RequestId>, meta: Option<&Value>) -> Result<(), ProtocolError> {
    let Some(meta) = meta else {
        return Err(malformed_meta(id, "the request has no _meta"));
    };
    let Ok(meta) = serde_json::from_value::<RequestMetaObject>(meta.clone()) else {
        return Err(malformed_meta(id, "_meta must be a JSON object"));
    };
    let missing = meta.missing_required_keys(&MODERN);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(malformed_meta(
            id,
            &format!(
                "_meta is missing or has malformed required fields: {}",
                missing.join(", ")
            ),
        ))
    }
}

fn missing_discover_meta(id: Option<RequestId>) -> ProtocolError {
    malformed_meta(
        id,
        &format!(
            "server/discover belongs to protocol version {MODERN}: send _meta with \
             \"{META_PROTOCOL_VERSION}\" and \"io.modelcontextprotocol/clientCapabilities\""
        ),
    )
}

fn malformed_meta(id: Option<RequestId>, reason: &str) -> ProtocolError {
    ProtocolError::invalid_params(StatusCode::BAD_REQUEST, id, format!("Invalid params: {reason}."))
}

fn mismatch(id: Option<RequestId>, reason: String) -> ProtocolError {
    ProtocolError {
        status: StatusCode::BAD_REQUEST,
        id,
        error: Box::new(ErrorData::header_mismatch(format!("Header mismatch: {reason}."), None)),
    }
}

fn unsupported(id: Option<RequestId>, requested: &str) -> ProtocolError {
    ProtocolError::new(
        StatusCode::BAD_REQUEST,
        id,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"supported": supported(), "requested": clip(requested)}))
}

/// At most 64 characters of a caller-supplied value, for messages.
fn clip(value: &str) -> String {
    value.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::parse;
    use http::HeaderValue;

    fn headers(version: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(version) = version {
            headers.insert(HEADER, HeaderValue::from_str(version).unwrap());
        }
        headers
    }

    fn request(method: &str, params: Value) -> Message {
        parse(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    }

    fn modern_meta(version: &str) -> Value {
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}
        }})
    }

    fn code(result: Result<Era, ProtocolError>) -> (u16, i32) {
        let err = result.unwrap_err();
        (err.status.as_u16(), err.error.code.0)
    }

    #[test]
    fn a_modern_request_needs_the_same_version_in_header_and_meta() {
        let message = request("tools/list", modern_meta("2026-07-28"));
        assert_eq!(classify(&headers(Some("2026-07-28")), &message).unwrap(), Era::Modern);
        assert_eq!(classify(&headers(Some(" 2026-07-28 ")), &message).unwrap(), Era::Modern);
        assert_eq!(code(classify(&headers(None), &message)), (400, -32020));
        assert_eq!(code(classify(&headers(Some("2025-11-25")), &message)), (400, -32020));
    }

    #[test]
    fn an_unknown_version_is_refused_with_the_supported_list() {
        let message = request("server/discover", modern_meta("v999.0.0"));
        let err = classify(&headers(Some("v999.0.0")), &message).unwrap_err();
        assert_eq!((err.status.as_u16(), err.error.code.0), (400, -32022));
        let data = err.error.data.unwrap();
        assert_eq!(data["requested"], "v999.0.0");
        assert_eq!(
            data["supported"],
            json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
        );
        // A legacy request with an unknown header version is refused the same way.
        let legacy = request("tools/list", json!({}));
        assert_eq!(code(classify(&headers(Some("1900-01-01")), &legacy)), (400, -32022));
    }

    #[test]
    fn a_modern_request_without_its_required_meta_is_invalid_params() {
        let no_meta = request("server/discover", json!({}));
        assert_eq!(code(classify(&headers(Some("2026-07-28")), &no_meta)), (400, -32602));
        assert_eq!(code(classify(&headers(None), &no_meta)), (400, -32602));
        let no_capabilities = request(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        );
        assert_eq!(
            code(classify(&headers(Some("2026-07-28")), &no_capabilities)),
            (400, -32602)
        );
        let header_only = request("tools/list", json!({}));
        assert_eq!(
            code(classify(&headers(Some("2026-07-28")), &header_only)),
            (400, -32602)
        );
    }

    #[test]
    fn legacy_requests_are_served_with_the_version_of_their_header() {
        let message = request("tools/list", json!({}));
        assert_eq!(
            classify(&headers(Some("2025-11-25")), &message).unwrap(),
            Era::Legacy(ProtocolVersion::V_2025_11_25)
        );
        assert_eq!(classify(&headers(None), &message).unwrap(), Era::Legacy(LEGACY_DEFAULT));
        let notification = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(classify(&headers(Some("2025-06-18")), &notification).is_ok());
        assert_eq!(code(classify(&headers(Some("nope")), &notification)), (400, -32022));
    }

    #[test]
    fn initialize_selects_the_legacy_era_unless_it_carries_modern_meta() {
        let handshake = request(
            "initialize",
            json!({"protocolVersion": "2026-07-28", "capabilities": {}}),
        );
        assert!(matches!(
            classify(&headers(Some("2026-07-28")), &handshake),
            Ok(Era::Legacy(_))
        ));
        assert!(matches!(classify(&headers(None), &handshake), Ok(Era::Legacy(_))));
        // A modern request that calls `initialize` is modern (and gets 404: the method is gone).
        let modern = request("initialize", modern_meta("2026-07-28"));
        assert_eq!(classify(&headers(Some("2026-07-28")), &modern).unwrap(), Era::Modern);
    }

    #[test]
    fn initialize_negotiates_a_handshake_revision() {
        assert_eq!(negotiate("2025-11-25"), ProtocolVersion::V_2025_11_25);
        assert_eq!(negotiate("2025-06-18"), ProtocolVersion::V_2025_06_18);
        assert_eq!(negotiate("2024-11-05"), ProtocolVersion::V_2025_11_25);
        assert_eq!(negotiate("2026-07-28"), ProtocolVersion::V_2025_11_25);
        assert_eq!(negotiate("garbage"), ProtocolVersion::V_2025_11_25);
    }
}
