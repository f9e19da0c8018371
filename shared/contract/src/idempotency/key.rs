//! The idempotency key: what the caller sends to say "this is the same draft".

use std::fmt;

/// A valid idempotency key: 1-255 printable ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

const MAX_LEN: usize = 255;

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
        Self::new(value)
    }

    fn new(value: String) -> Result<Self, String> {
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
        Ok(Self(value))
    }

    /// The key an agent executor forms: `<X-Agent-Run-Id>:<client_ref>`.
    pub fn from_run(run_id: &str, client_ref: &str) -> Result<Self, String> {
        Self::new(format!("{run_id}:{client_ref}"))
    }

    /// The key for callers that send neither header nor run id (MCP clients):
    /// `mcp:<user>:<client_ref>`, so two users' references never meet.
    pub fn from_client_ref(user: &str, client_ref: &str) -> Result<Self, String> {
        Self::new(format!("mcp:{user}:{client_ref}"))
    }

    /// The key as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
    fn empty_long_and_non_ascii_keys_are_refused() {
        assert!(IdempotencyKey::parse_header("").is_err());
        assert!(IdempotencyKey::parse_header("\"\"").is_err());
        assert!(IdempotencyKey::parse_header(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse_header(&"k".repeat(255)).is_ok());
        assert!(IdempotencyKey::parse_header("kunci-é").is_err());
        assert!(IdempotencyKey::parse_header("\"open").is_err());
    }
}
