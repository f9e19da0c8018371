//! What the executor tells us in headers: agent run and tool call ids,
//! model and prompt version, and the approval a person gave (DESIGN.md,
//! request headers). Tools see it as [`AgentContext`].

use http::HeaderMap;
use serde::Serialize;

use crate::error::ToolError;

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
    /// `X-Tool-Approval`: what the executor says a person decided before the
    /// call (`approved`, or `not-required` for a tool that asks nobody).
    pub approval: Option<Approval>,
    /// `X-Tool-Approval-Reason`: the approver's reason, percent-decoded UTF-8,
    /// at most 500 characters.
    pub approval_reason: Option<String>,
}

/// An executor's statement about human approval of one tool call
/// (`X-Tool-Approval`). A denied call never reaches a tool, so there is no
/// `denied` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approval {
    /// A person approved this call.
    Approved,
    /// The tool's policy asks nobody (read tools).
    NotRequired,
}

impl Approval {
    /// The value as sent and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::NotRequired => "not-required",
        }
    }
}

/// The longest approval reason kept, in characters.
pub const MAX_APPROVAL_REASON: usize = 500;

/// The grammar of `X-Tool-Approval-Reason` for the published schemas,
/// exactly what the server accepts: at most [`MAX_APPROVAL_REASON`]
/// characters once decoded, each one a printable ASCII character other
/// than `%`, or the percent-encoding (either case of hex) of one UTF-8
/// character that is not a control character (no `%00`-`%1F`, `%7F`, nor
/// U+0080-U+009F, no overlong or surrogate forms).
pub const APPROVAL_REASON_PATTERN: &str = concat!(
    "^(?:",
    "[ -$&-~]",
    "|%(?:2[0-9A-Fa-f]|[3-6][0-9A-Fa-f]|7[0-9A-Ea-e])",
    "|%[Cc]2%[AaBb][0-9A-Fa-f]",
    "|%(?:[Cc][3-9A-Fa-f]|[Dd][0-9A-Fa-f])%[89ABab][0-9A-Fa-f]",
    "|%[Ee]0%[AaBb][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]",
    "|%[Ee][1-9A-Ca-cEeFf](?:%[89ABab][0-9A-Fa-f]){2}",
    "|%[Ee][Dd]%[89][0-9A-Fa-f]%[89ABab][0-9A-Fa-f]",
    "|%[Ff]0%[9AaBb][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}",
    "|%[Ff][1-3](?:%[89ABab][0-9A-Fa-f]){3}",
    "|%[Ff]4%8[0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){2}",
    "){0,500}$"
);

/// The grammar of `X-Agent-Run-Id` and `X-Tool-Call-Id`, for the published schemas.
pub const ID_HEADER_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";

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
        Err(ToolError::invalid_schema(
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
    /// The agent headers as far as they are valid, each malformed one left
    /// out: what the audit item of any call (even a refused one) records.
    pub fn lenient(headers: &HeaderMap) -> Self {
        Self {
            run_id: id_header(headers, "x-agent-run-id").ok().flatten(),
            tool_call_id: id_header(headers, "x-tool-call-id").ok().flatten(),
            model: label_header(headers, "x-agent-model"),
            prompt_version: label_header(headers, "x-prompt-version"),
            approval: approval_header(headers).ok().flatten(),
            approval_reason: approval_reason_header(headers).ok().flatten(),
        }
    }

    /// Reads the agent headers. A malformed run or tool-call id is an error,
    /// because the run id may become part of an idempotency key.
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, ToolError> {
        Ok(Self {
            run_id: id_header(headers, "x-agent-run-id")?,
            tool_call_id: id_header(headers, "x-tool-call-id")?,
            model: label_header(headers, "x-agent-model"),
            prompt_version: label_header(headers, "x-prompt-version"),
            approval: approval_header(headers)?,
            approval_reason: approval_reason_header(headers)?,
        })
    }
}

fn approval_header(headers: &HeaderMap) -> Result<Option<Approval>, ToolError> {
    let Some(raw) = headers.get("x-tool-approval") else {
        return Ok(None);
    };
    match raw.to_str().unwrap_or_default().trim() {
        "approved" => Ok(Some(Approval::Approved)),
        "not-required" => Ok(Some(Approval::NotRequired)),
        _ => Err(ToolError::invalid_schema(
            "header:X-Tool-Approval",
            "the X-Tool-Approval header must be 'approved' or 'not-required' (a denied call is not sent at all). \
             Nothing was created or changed.",
        )),
    }
}

fn approval_reason_header(headers: &HeaderMap) -> Result<Option<String>, ToolError> {
    let Some(raw) = headers.get("x-tool-approval-reason") else {
        return Ok(None);
    };
    // Valid percent-encoding of UTF-8 without control characters is more
    // than a schema can say: a rule.
    let invalid = || {
        ToolError::invalid(
            "header:X-Tool-Approval-Reason",
            format!(
                "the X-Tool-Approval-Reason header must be percent-encoded UTF-8 text (encodeURIComponent) of at most \
                 {MAX_APPROVAL_REASON} characters without control characters. Nothing was created or changed."
            ),
        )
    };
    let text = percent_decode(raw.to_str().map_err(|_| invalid())?.trim()).ok_or_else(invalid)?;
    if text.chars().count() > MAX_APPROVAL_REASON || text.chars().any(char::is_control) {
        return Err(invalid());
    }
    Ok((!text.is_empty()).then_some(text))
}

/// Decodes `%XX` escapes into UTF-8 text; `None` for a broken escape or
/// invalid UTF-8 (`+` stays `+`). Also what `OTEL_RESOURCE_ATTRIBUTES`
/// values are decoded with.
pub fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_reason_is_percent_decoded_and_bounded() {
        let mut headers = HeaderMap::new();
        headers.insert("x-tool-approval", "approved".parse().unwrap());
        headers.insert(
            "x-tool-approval-reason",
            "Stok%20menipis%2C%20ok%20%E2%9C%93".parse().unwrap(),
        );
        let agent = AgentContext::from_headers(&headers).unwrap();
        assert_eq!(agent.approval, Some(Approval::Approved));
        assert_eq!(agent.approval_reason.as_deref(), Some("Stok menipis, ok \u{2713}"));
        for bad in ["%E2%9C", "%zz", "line%0Abreak"] {
            headers.insert("x-tool-approval-reason", bad.parse().unwrap());
            assert!(AgentContext::from_headers(&headers).is_err(), "{bad}");
        }
        headers.insert("x-tool-approval-reason", "a".repeat(501).parse().unwrap());
        assert!(AgentContext::from_headers(&headers).is_err());
        headers.remove("x-tool-approval-reason");
        headers.insert("x-tool-approval", "denied".parse().unwrap());
        assert!(AgentContext::from_headers(&headers).is_err());
    }

    /// `encodeURIComponent`: what an executor sends.
    fn encode_uri_component(text: &str) -> String {
        let mut out = String::new();
        for byte in text.bytes() {
            if byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte) {
                out.push(char::from(byte));
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
        out
    }

    fn accepted(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        let Ok(value) = value.parse() else {
            return false;
        };
        headers.insert("x-tool-approval-reason", value);
        approval_reason_header(&headers).is_ok()
    }

    proptest::proptest! {
        #[test]
        fn every_value_the_published_pattern_allows_is_accepted(
            // The generator takes the pattern without its anchors.
            value in proptest::string::string_regex(&APPROVAL_REASON_PATTERN[1..APPROVAL_REASON_PATTERN.len() - 1]).unwrap()
        ) {
            proptest::prop_assert!(accepted(&value), "{value:?}");
        }

        #[test]
        fn every_encoded_reason_the_server_accepts_matches_the_published_pattern(
            reason in proptest::collection::vec(proptest::char::any(), 0..=MAX_APPROVAL_REASON + 20)
        ) {
            let reason: String = reason.into_iter().collect();
            let encoded = encode_uri_component(&reason);
            let pattern = regex_lite::Regex::new(APPROVAL_REASON_PATTERN).unwrap();
            proptest::prop_assert_eq!(accepted(&encoded), pattern.is_match(&encoded), "{:?}", encoded);
        }
    }

    #[test]
    fn the_published_pattern_refuses_what_the_server_refuses() {
        let pattern = regex_lite::Regex::new(APPROVAL_REASON_PATTERN).unwrap();
        let long_ascii = "a".repeat(MAX_APPROVAL_REASON + 1);
        let long_encoded = "%E2%9C%93".repeat(MAX_APPROVAL_REASON + 1);
        let at_most = "%E2%9C%93".repeat(MAX_APPROVAL_REASON);
        for (value, ok) in [
            ("Stok%20menipis%2C%20ok%20%E2%9C%93", true),
            ("plain words, as typed", true),
            (at_most.as_str(), true),
            (long_ascii.as_str(), false),
            (long_encoded.as_str(), false),
            ("%E2%9C", false),
            ("%zz", false),
            ("line%0Abreak", false),
            ("c1%C2%85control", false),
            ("overlong%C0%AF", false),
            ("surrogate%ED%A0%80", false),
            ("100%", false),
        ] {
            assert_eq!(pattern.is_match(value), ok, "pattern on {value}");
            assert_eq!(accepted(value), ok, "server on {value}");
        }
    }
}
