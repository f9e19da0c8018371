//! The idempotency key: what the caller sends to say "this is the same draft".
//!
//! A key has a source (an `Idempotency-Key` header, an agent run id +
//! `client_ref`, or an MCP caller's `client_ref`), and it is stored scoped
//! by its source and by the caller (tenant, branch, user): see
//! [`IdempotencyKey::storage_key`]. So a caller can never occupy a key that
//! another caller's derived key maps to — `buyer-jkt` sending
//! `Idempotency-Key: mcp:buyer-sby:r1` or `buyer-sby`'s run id reaches a
//! record of its own — while every retry of a caller's own call finds its
//! record.

use std::fmt;

use draftline_contract::identity::Caller;

/// Where a key came from; part of its stored identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeySource {
    /// The `Idempotency-Key` header.
    Header,
    /// `X-Agent-Run-Id` + `client_ref`.
    Run,
    /// An MCP caller without a run id: its `client_ref`.
    ClientRef,
}

impl KeySource {
    fn tag(self) -> &'static str {
        match self {
            Self::Header => "H",
            Self::Run => "R",
            Self::ClientRef => "C",
        }
    }
}

/// A valid idempotency key: 1-255 printable ASCII characters, and its source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    value: String,
    source: KeySource,
}

const MAX_LEN: usize = 255;

/// The grammar of the `Idempotency-Key` header for the published schemas:
/// a bare key (printable ASCII, not starting with a quote, no space at
/// either end) or an RFC 8941 quoted string whose characters are printable
/// ASCII with `\"` and `\\` escapes. Every value it matches is accepted.
pub const HEADER_PATTERN: &str = r#"^(?:[!#-~](?:[ -~]{0,253}[!-~])?|"(?:[ !#-\[\]-~]|\\["\\]){1,255}")$"#;

fn printable(value: &str) -> bool {
    value.bytes().all(|b| (0x20..0x7f).contains(&b))
}

impl IdempotencyKey {
    /// Parses an `Idempotency-Key` header: an RFC 8941 string (`"abc"`, with
    /// `\"` and `\\` escapes) or the same characters without quotes.
    pub fn parse_header(raw: &str) -> Result<Self, String> {
        let raw = raw.trim_matches(' ');
        let value = if let Some(inner) = raw.strip_prefix('"') {
            let inner = inner
                .strip_suffix('"')
                .ok_or("the Idempotency-Key header opens a quoted string but does not close it")?;
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some(escaped @ ('"' | '\\')) => out.push(escaped),
                        _ => {
                            return Err(
                                "the Idempotency-Key header has an invalid escape (only \\\" and \\\\ are allowed)"
                                    .into(),
                            );
                        }
                    },
                    '"' => return Err("the Idempotency-Key header has an unescaped quote inside the string".into()),
                    c => out.push(c),
                }
            }
            out
        } else {
            raw.to_owned()
        };
        Self::new(value, KeySource::Header)
    }

    fn new(value: String, source: KeySource) -> Result<Self, String> {
        if value.is_empty() {
            return Err("the Idempotency-Key header is empty".into());
        }
        if value.len() > MAX_LEN {
            return Err(format!(
                "the Idempotency-Key is {} characters long; the limit is {MAX_LEN}",
                value.len()
            ));
        }
        if !printable(&value) {
            return Err("the Idempotency-Key contains characters other than printable ASCII".into());
        }
        Ok(Self { value, source })
    }

    /// The key an agent executor forms: `<X-Agent-Run-Id>:<client_ref>`.
    pub fn from_run(run_id: &str, client_ref: &str) -> Result<Self, String> {
        Self::new(format!("{run_id}:{client_ref}"), KeySource::Run)
    }

    /// The key for callers that send neither header nor run id (MCP
    /// clients): their `client_ref`, scoped to them like every key.
    pub fn from_client_ref(client_ref: &str) -> Result<Self, String> {
        Self::new(client_ref.to_owned(), KeySource::ClientRef)
    }

    /// The key as the caller knows it.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Where the key came from.
    pub fn source(&self) -> KeySource {
        self.source
    }

    /// The key as stored: `<branch>#<user>#<source>#<key>` under the
    /// tenant's partition prefix. Branch and user ids cannot contain `#`.
    pub fn storage_key(&self, caller: &Caller) -> String {
        format!(
            "{}#{}#{}#{}",
            caller.branch(),
            caller.user(),
            self.source.tag(),
            self.value
        )
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_bare_keys_mean_the_same() {
        assert_eq!(
            IdempotencyKey::parse_header("\"po-42\"").unwrap(),
            IdempotencyKey::parse_header("po-42").unwrap()
        );
        assert_eq!(IdempotencyKey::parse_header(r#""a\"b""#).unwrap().as_str(), "a\"b");
    }

    #[test]
    fn keys_of_different_sources_or_callers_never_meet_in_storage() {
        let caller = |branch: &str, user: &str| crate::testing::caller("demo", branch, user, "");
        let sby = caller("SBY-01", "buyer-sby");
        let jkt = caller("JKT-01", "buyer-jkt");
        let header = IdempotencyKey::parse_header("r-1:ref").unwrap();
        let run = IdempotencyKey::from_run("r-1", "ref").unwrap();
        assert_eq!(header.as_str(), run.as_str());
        assert_ne!(header.storage_key(&sby), run.storage_key(&sby));
        assert_ne!(run.storage_key(&sby), run.storage_key(&jkt));
        assert_eq!(
            run.storage_key(&sby),
            IdempotencyKey::from_run("r-1", "ref").unwrap().storage_key(&sby)
        );
    }

    #[test]
    fn empty_long_and_non_ascii_keys_are_refused() {
        assert!(IdempotencyKey::parse_header("").is_err());
        assert!(IdempotencyKey::parse_header("\"\"").is_err());
        assert!(IdempotencyKey::parse_header(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse_header(&"k".repeat(255)).is_ok());
        assert!(IdempotencyKey::parse_header("kunci-é").is_err());
        assert!(IdempotencyKey::parse_header("\"open").is_err());
    }
}
