//! W3C Trace Context (`traceparent`, `tracestate`): read where a call
//! enters (the HTTP request, or MCP 2026-07-28 `params._meta`), validated,
//! and continued. A malformed value is ignored, never an error: the call
//! then starts a fresh trace. Only ids cross here, never a value a caller
//! sent in confidence.

use std::fmt;

use http::HeaderMap;

/// The longest `tracestate` kept (the W3C limit is 32 members of 256; a
/// longer one is dropped rather than cut, as the spec allows).
const MAX_TRACESTATE: usize = 512;

/// The trace a call belongs to: its trace id, and the caller's span it
/// continues (none for a fresh trace).
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    parent: Option<[u8; 8]>,
    sampled: bool,
    tracestate: Option<String>,
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("trace_id", &self.trace_id())
            .field("parent", &self.parent_span_id())
            .field("sampled", &self.sampled)
            .finish()
    }
}

impl TraceContext {
    /// A fresh trace: a random trace id, no parent, sampled.
    pub fn fresh() -> Self {
        let mut trace_id: [u8; 16] = rand::random();
        if trace_id == [0; 16] {
            trace_id[15] = 1;
        }
        Self {
            trace_id,
            parent: None,
            sampled: true,
            tracestate: None,
        }
    }

    /// The trace the headers continue, else a fresh one.
    pub fn of_headers(headers: &HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Self::continued(text("traceparent"), text("tracestate")).unwrap_or_else(Self::fresh)
    }

    /// The trace `traceparent` (and its `tracestate`) continue, if it is valid.
    pub fn continued(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Self> {
        let (trace_id, parent, sampled) = parse_traceparent(traceparent?)?;
        let tracestate = tracestate
            .map(str::trim)
            .filter(|state| valid_tracestate(state))
            .map(str::to_owned);
        Some(Self {
            trace_id,
            parent: Some(parent),
            sampled,
            tracestate,
        })
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        hex::encode(self.trace_id)
    }

    /// The trace id's bytes.
    pub fn trace_id_bytes(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The caller's span this call continues, 16 lowercase hex digits.
    pub fn parent_span_id(&self) -> Option<String> {
        self.parent.map(hex::encode)
    }

    /// The caller's span's bytes.
    pub fn parent_span_id_bytes(&self) -> Option<[u8; 8]> {
        self.parent
    }

    /// Whether the caller sampled the trace (`01` flag).
    pub fn sampled(&self) -> bool {
        self.sampled
    }

    /// The vendor state to pass on unchanged, when the caller sent a valid one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `traceparent` that names span `span_id` of this trace (what a
    /// request this call makes carries onward).
    pub fn traceparent_for(&self, span_id: [u8; 8]) -> String {
        format!(
            "00-{}-{}-{}",
            self.trace_id(),
            hex::encode(span_id),
            if self.sampled { "01" } else { "00" }
        )
    }
}

/// `version-traceid-parentid-flags`, lowercase hex; version `ff`, all-zero
/// ids and a version-00 header with more fields are invalid. A later version
/// may carry more fields after these four, which are read as version 00's.
fn parse_traceparent(value: &str) -> Option<([u8; 16], [u8; 8], bool)> {
    let value = value.trim();
    let mut fields = value.split('-');
    let (version, trace, parent, flags) = (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
    let hex_field = |field: &str, len: usize| {
        field.len() == len && field.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !hex_field(version, 2)
        || version == "ff"
        || !hex_field(trace, 32)
        || !hex_field(parent, 16)
        || !hex_field(flags, 2)
    {
        return None;
    }
    if version == "00" && fields.next().is_some() {
        return None;
    }
    let mut trace_id = [0u8; 16];
    let mut parent_id = [0u8; 8];
    hex::decode_to_slice(trace, &mut trace_id).ok()?;
    hex::decode_to_slice(parent, &mut parent_id).ok()?;
    if trace_id == [0; 16] || parent_id == [0; 8] {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some((trace_id, parent_id, flags & 1 == 1))
}

/// A `tracestate` kept as it came: bounded, printable, list members of `key=value`.
fn valid_tracestate(state: &str) -> bool {
    !state.is_empty()
        && state.len() <= MAX_TRACESTATE
        && state.bytes().all(|b| (0x20..0x7f).contains(&b))
        && state
            .split(',')
            .map(str::trim)
            .filter(|member| !member.is_empty())
            .all(|member| {
                member
                    .split_once('=')
                    .is_some_and(|(k, v)| !k.is_empty() && !v.is_empty())
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_continued_with_its_state() {
        let trace = TraceContext::continued(Some(VALID), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).unwrap();
        assert_eq!(trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(trace.parent_span_id().as_deref(), Some("00f067aa0ba902b7"));
        assert!(trace.sampled());
        assert_eq!(trace.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
        assert_eq!(
            trace.traceparent_for([1, 2, 3, 4, 5, 6, 7, 8]),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0102030405060708-01"
        );
        // A later version's extra fields are tolerated.
        assert!(TraceContext::continued(Some(&format!("01{}-extra", &VALID[2..])), None).is_some());
    }

    #[test]
    fn a_malformed_traceparent_is_ignored_and_a_bad_tracestate_dropped() {
        for bad in [
            "",
            "garbage",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        ] {
            assert!(TraceContext::continued(Some(bad), None).is_none(), "{bad}");
        }
        let kept = TraceContext::continued(Some(VALID), Some("no-equals-sign")).unwrap();
        assert_eq!(kept.tracestate(), None);
        let long = format!("k={}", "v".repeat(MAX_TRACESTATE));
        assert_eq!(
            TraceContext::continued(Some(VALID), Some(&long)).unwrap().tracestate(),
            None
        );
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", "not-a-trace".parse().unwrap());
        let fresh = TraceContext::of_headers(&headers);
        assert_eq!(fresh.parent_span_id(), None);
        assert_eq!(fresh.trace_id().len(), 32);
        assert_ne!(fresh.trace_id(), TraceContext::fresh().trace_id());
    }
}
