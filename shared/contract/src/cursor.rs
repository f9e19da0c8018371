//! Opaque pagination cursors.
//!
//! A list tool hands out a cursor when there are more results, and takes it
//! back to continue. The cursor carries a position in the listing (for
//! DynamoDB, where the last page stopped), never trusted on its own: it is
//! sealed with HMAC-SHA256 under a key derived from the deployment's
//! configuration (the server derives it with [`CursorKey::derive`]) and bound to the caller's tenant
//! and branch, the tool, and the tool's filters ([`CursorScope`]). A cursor
//! that was changed, cut short, minted by another deployment, or handed to
//! another tool, branch or set of filters fails to open, and the caller gets a
//! `VALIDATION_ERROR` at path `cursor` (400), never another branch's data.
//!
//! The wire form is `v1.<payload>.<mac>`, both parts base64url without
//! padding; the payload is the JSON of the position.
//!
//! Tools still build every key from the verified caller, so even a forged
//! position could only point inside the caller's own branch data; the seal
//! makes tampering visible instead of silently skipping results.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::error::{FieldIssue, ToolError};
use crate::identity::Caller;
use crate::validation;

type HmacSha256 = Hmac<Sha256>;

/// The longest cursor a tool hands out (and so accepts).
pub const MAX_CURSOR_LEN: usize = 512;

/// The version prefix of the wire form.
const VERSION: &str = "v1";

/// Domain separation for the key derivation.
const KEY_CONTEXT: &[u8] = b"draftline/cursor-key/v1";

/// Where a cursor's key material came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// `DRAFTLINE_CURSOR_SECRET`.
    CursorSecret,
    /// `DRAFTLINE_JWT_SECRET` (no cursor secret configured).
    JwtSecret,
    /// Neither secret is configured (a JWKS-only deployment): the key is
    /// derived from the public deployment facts. Cursors still cannot leave
    /// the caller's branch (every key is built from the token), but they can
    /// be forged; set `DRAFTLINE_CURSOR_SECRET` to make them unforgeable.
    PublicFacts,
}

/// The key that seals cursors. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct CursorKey {
    key: [u8; 32],
    source: KeySource,
}

impl fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorKey")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl CursorKey {
    /// A key derived from `secret` for `context` (tests, tools).
    pub fn from_secret(secret: &[u8], context: &str) -> Self {
        Self::derive(secret, context.as_bytes(), KeySource::CursorSecret)
    }

    /// The key derived from `material` for `context` (the deployment), whose
    /// material came from `source`. Every instance of one deployment derives
    /// the same key, so a cursor from one warm instance opens on any other.
    pub fn derive(material: &[u8], context: &[u8], source: KeySource) -> Self {
        let mut mac = mac_with(&Sha256::digest(material).into());
        mac.update(KEY_CONTEXT);
        mac.update(b"|");
        mac.update(context);
        Self {
            key: mac.finalize().into_bytes().into(),
            source,
        }
    }

    /// Where the key material came from.
    pub fn source(&self) -> KeySource {
        self.source
    }

    /// A MAC of `payload` for `purpose` (a fixed label such as
    /// `b"request-state/v1"`), under this deployment's key: how other sealed
    /// values (the request state of a question) are bound to it.
    pub fn tag(&self, purpose: &[u8], payload: &[u8]) -> [u8; 32] {
        let mut mac = mac_with(&self.key);
        mac.update(purpose);
        mac.update(b"|");
        mac.update(payload);
        mac.finalize().into_bytes().into()
    }
}

/// HMAC-SHA256 keyed by a 32-byte key. HMAC pads a short key with zeros to
/// the 64-byte block, so padding it here gives the same MAC, through the
/// constructor that cannot fail.
fn mac_with(key: &[u8; 32]) -> HmacSha256 {
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    <HmacSha256 as KeyInit>::new(&block.into())
}

/// What a cursor is bound to: the caller's tenant and branch, the tool, and
/// the filters of the search (everything but the cursor and the page size).
#[derive(Debug, Clone)]
pub struct CursorScope<'a> {
    key: &'a CursorKey,
    binding: String,
}

impl<'a> CursorScope<'a> {
    /// The scope of `tool` called by `caller` with `filters`.
    pub fn new(key: &'a CursorKey, caller: &Caller, tool: &str, filters: &impl Serialize) -> Result<Self, ToolError> {
        let filters = serde_json::to_value(filters).map_err(ToolError::internal)?;
        let binding = canonical::to_canonical_string(&serde_json::json!({
            "tenant": caller.tenant().as_str(),
            "branch": caller.branch().as_str(),
            "tool": tool,
            "filters": filters,
        }));
        Ok(Self { key, binding })
    }

    fn mac(&self, payload: &str) -> HmacSha256 {
        let mut mac = mac_with(&self.key.key);
        mac.update(VERSION.as_bytes());
        mac.update(b"\n");
        mac.update(self.binding.as_bytes());
        mac.update(b"\n");
        mac.update(payload.as_bytes());
        mac
    }

    /// Seals `position` into a cursor for this scope.
    pub fn seal(&self, position: &impl Serialize) -> Result<String, ToolError> {
        let json = serde_json::to_vec(position).map_err(ToolError::internal)?;
        let payload = URL_SAFE_NO_PAD.encode(json);
        let tag = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        let cursor = format!("{VERSION}.{payload}.{tag}");
        if cursor.len() > MAX_CURSOR_LEN {
            return Err(ToolError::internal(format!(
                "a cursor of {} bytes exceeds the {MAX_CURSOR_LEN}-byte limit",
                cursor.len()
            )));
        }
        Ok(cursor)
    }

    /// Opens `cursor` (`None` is the first page). A cursor this scope did not
    /// seal, or whose position does not parse as `P`, is a `VALIDATION_ERROR`
    /// at path `cursor`.
    pub fn open<P: DeserializeOwned>(&self, cursor: Option<&str>) -> Result<Option<P>, ToolError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        self.verify(cursor).map(Some).ok_or_else(foreign_cursor)
    }

    fn verify<P: DeserializeOwned>(&self, cursor: &str) -> Option<P> {
        if cursor.len() > MAX_CURSOR_LEN {
            return None;
        }
        let mut parts = cursor.split('.');
        let (version, payload, tag) = (parts.next()?, parts.next()?, parts.next()?);
        if version != VERSION || parts.next().is_some() {
            return None;
        }
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // Constant-time comparison.
        self.mac(payload).verify_slice(&tag).ok()?;
        let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
        serde_json::from_slice::<Value>(&json)
            .ok()
            .and_then(|value| serde_json::from_value(value).ok())
    }
}

/// The error for a cursor that does not open.
pub fn foreign_cursor() -> ToolError {
    validation::rejected_with(
        vec![FieldIssue::new(
            "cursor",
            "this cursor was not handed out for this search: it was changed or cut short, or it comes from \
             another search (other filters), another tool or another branch. Send the same filters with cursor \
             null to start again from the first page, then pass each next_cursor back unchanged",
        )],
        "Nothing was read.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{BranchCode, BranchId, Scopes, TenantId, UserId};
    use serde::Deserialize;
    use serde_json::json;

    fn caller(branch: &str) -> Caller {
        Caller::from_verified(
            TenantId::parse("demo").unwrap(),
            BranchId::parse(branch).unwrap(),
            BranchCode::parse("X").unwrap(),
            UserId::parse("u").unwrap(),
            Vec::new(),
            Scopes::from_claim("purchasing:read"),
        )
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct After {
        after: String,
    }

    fn position() -> After {
        After {
            after: "PO-SBY-000007".into(),
        }
    }

    #[test]
    fn a_sealed_cursor_opens_in_its_own_scope_only() {
        let key = CursorKey::from_secret(b"k", "test");
        let filters = json!({"status": "draft", "vendor_code": null});
        let sby = CursorScope::new(&key, &caller("SBY-01"), "purchasing_search_pos", &filters).unwrap();
        let cursor = sby.seal(&position()).unwrap();
        assert_eq!(sby.open::<After>(Some(&cursor)).unwrap(), Some(position()));
        assert_eq!(sby.open::<After>(None).unwrap(), None);

        let jkt = CursorScope::new(&key, &caller("JKT-01"), "purchasing_search_pos", &filters).unwrap();
        let other_tool = CursorScope::new(&key, &caller("SBY-01"), "sales_search_customers", &filters).unwrap();
        let other_filters = CursorScope::new(
            &key,
            &caller("SBY-01"),
            "purchasing_search_pos",
            &json!({"status": null}),
        )
        .unwrap();
        let other_key = CursorKey::from_secret(b"other", "test");
        let other_deployment =
            CursorScope::new(&other_key, &caller("SBY-01"), "purchasing_search_pos", &filters).unwrap();
        for scope in [jkt, other_tool, other_filters, other_deployment] {
            let err = scope.open::<After>(Some(&cursor)).unwrap_err();
            assert_eq!(err.status().as_u16(), 400);
            assert_eq!(err.details().unwrap()[0].path, "cursor");
        }
    }

    #[test]
    fn a_changed_or_malformed_cursor_is_a_validation_error() {
        let key = CursorKey::from_secret(b"k", "test");
        let scope = CursorScope::new(&key, &caller("SBY-01"), "t", &json!({})).unwrap();
        let cursor = scope.seal(&position()).unwrap();
        let (head, tag) = cursor.rsplit_once('.').unwrap();
        // A payload that says another position, with the old tag.
        let forged_payload = URL_SAFE_NO_PAD.encode(br#"{"after":"PO-JKT-000001"}"#);
        let cases = [
            format!("{head}.{}", &tag[1..]),
            format!("v1.{forged_payload}.{tag}"),
            format!("v2.{}", &cursor[3..]),
            "garbage".to_owned(),
            String::new(),
            format!("{cursor}.x"),
            "x".repeat(MAX_CURSOR_LEN + 1),
        ];
        for case in &cases {
            let err = scope.open::<After>(Some(case)).unwrap_err();
            assert_eq!(err.code().as_str(), "VALIDATION_ERROR", "{case}");
            assert!(err.to_string().contains("cursor null"), "{err}");
        }
    }
}
