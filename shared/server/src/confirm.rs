//! Asking a person before guessing: the sealed request state of a question
//! and the decision that answers it.
//!
//! When a draft tool finds an open agent draft of the same items, it answers
//! `INPUT_REQUIRED` and creates nothing. The server seals a request state —
//! the caller (tenant, branch, user), the tool, the fingerprint of the exact
//! input, the existing draft's number, and an expiry — with the
//! deployment's key, and hands it out with the question. The confirmed retry
//! brings it back with the person's decision:
//!
//! - MCP 2026-07-28: `requestState` and `inputResponses[`[`ELICITATION_KEY`]`]`
//!   (an accepted elicitation whose `decision` is `create_another` or
//!   `use_existing`) in the `tools/call` params;
//! - MCP 2025-11-25: `_meta["io.draftline/confirm"]` of the `tools/call` params;
//! - HTTP: the header `Draftline-Confirm`;
//!
//! the latter two as `create-another <state>` or `use-existing <state>`.
//! A state that was forged, has expired, or is presented by another caller,
//! for another tool or for other input is refused (`400`, nothing created).
//! Single use is not needed: a confirmed "create another" creates one
//! document under the call's idempotency key, and its retry is a replay.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorKey;
use draftline_contract::identity::Caller;
use draftline_contract::tool::Decision;
use serde::{Deserialize, Serialize};

/// How long a question may be answered.
pub const STATE_TTL_SECONDS: i64 = 15 * 60;

/// The `inputRequests` key of the elicitation (MCP 2026-07-28).
pub const ELICITATION_KEY: &str = "draftline_near_duplicate";

/// The `_meta` key of a 2025-11-25 confirmation.
pub const META_KEY: &str = "io.draftline/confirm";

/// The HTTP header of a confirmation.
pub const HEADER: &str = "draftline-confirm";

const PURPOSE: &[u8] = b"draftline/request-state/v1";
const VERSION: &str = "s1";

/// What a sealed state binds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    t: String,
    b: String,
    u: String,
    tool: String,
    fp: String,
    n: String,
    exp: i64,
}

/// A person's answer as it arrived, not yet checked against the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Create another draft anyway, under this state.
    CreateAnother(String),
    /// Use the existing draft, under this state.
    UseExisting(String),
    /// The person declined or cancelled the question.
    Declined,
}

impl Answer {
    /// Reads `create-another <state>` / `use-existing <state>`.
    pub fn parse(text: &str) -> Result<Self, ToolError> {
        let invalid = || {
            ToolError::invalid_schema(
                "header:Draftline-Confirm",
                "a confirmation is 'create-another <requestState>' or 'use-existing <requestState>', with the \
                 requestState of the question unchanged. Nothing was created.",
            )
        };
        let (decision, state) = text.trim().split_once(' ').ok_or_else(invalid)?;
        let state = state.trim();
        if state.is_empty() || state.len() > 2048 {
            return Err(invalid());
        }
        match decision {
            "create-another" => Ok(Self::CreateAnother(state.to_owned())),
            "use-existing" => Ok(Self::UseExisting(state.to_owned())),
            _ => Err(invalid()),
        }
    }
}

fn refused(why: &str) -> ToolError {
    ToolError::invalid(
        "requestState",
        format!(
            "The confirmation was refused: {why}. Nothing was created. Call the tool again without a confirmation \
             to be asked afresh, and pass the person's answer with the requestState of that question."
        ),
    )
}

/// Seals the state of a question about draft `number` for this call.
pub fn seal(
    key: &CursorKey,
    caller: &Caller,
    tool: &str,
    fingerprint: &str,
    number: &str,
    now: DateTime<Utc>,
) -> Result<String, ToolError> {
    let state = State {
        t: caller.tenant().to_string(),
        b: caller.branch().to_string(),
        u: caller.user().to_string(),
        tool: tool.to_owned(),
        fp: fingerprint.to_owned(),
        n: number.to_owned(),
        exp: now.timestamp().saturating_add(STATE_TTL_SECONDS),
    };
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&state).map_err(ToolError::internal)?);
    let tag = URL_SAFE_NO_PAD.encode(key.tag(PURPOSE, payload.as_bytes()));
    Ok(format!("{VERSION}.{payload}.{tag}"))
}

/// The decision an answer carries, if its state was sealed by this
/// deployment for exactly this caller, tool and input and has not expired.
pub fn decide(
    key: &CursorKey,
    answer: &Answer,
    caller: &Caller,
    tool: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> Result<Decision, ToolError> {
    let (sealed, create) = match answer {
        Answer::CreateAnother(state) => (state, true),
        Answer::UseExisting(state) => (state, false),
        Answer::Declined => {
            return Err(ToolError::Declined(
                "The person declined the question, so nothing was created. Do not retry this draft; tell the \
                 person it was not made."
                    .into(),
            ));
        }
    };
    let mut parts = sealed.split('.');
    let (Some(VERSION), Some(payload), Some(tag), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refused("it is not a request state this server handed out"));
    };
    let expected = key.tag(PURPOSE, payload.as_bytes());
    let given = URL_SAFE_NO_PAD.decode(tag).unwrap_or_default();
    if !constant_time_eq(&given, &expected) {
        return Err(refused("it is not a request state this server handed out"));
    }
    let state: State = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| refused("it is not a request state this server handed out"))?;
    if state.exp <= now.timestamp() {
        return Err(refused("the question has expired"));
    }
    let mine =
        state.t == caller.tenant().as_str() && state.b == caller.branch().as_str() && state.u == caller.user().as_str();
    if !mine {
        return Err(refused("the question was asked of another caller"));
    }
    if state.tool != tool || state.fp != fingerprint {
        return Err(refused(
            "the question was asked about another call (other tool or other arguments)",
        ));
    }
    Ok(if create {
        Decision::CreateAnother
    } else {
        Decision::UseExisting(state.n)
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use draftline_contract::identity::{BranchCode, BranchId, Scopes, TenantId, UserId};

    fn caller(user: &str) -> Caller {
        Caller::from_verified(
            TenantId::parse("demo").unwrap(),
            BranchId::parse("SBY-01").unwrap(),
            BranchCode::parse("SBY").unwrap(),
            UserId::parse(user).unwrap(),
            vec![],
            Scopes::from_claim("purchasing:draft"),
        )
    }

    #[test]
    fn a_state_answers_only_its_own_call_before_it_expires() {
        let key = CursorKey::from_secret(b"0123456789abcdef0123456789abcdef", "test");
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap();
        let me = caller("buyer-sby");
        let state = seal(&key, &me, "t", "fp", "PO-SBY-000031", now).unwrap();
        let create = Answer::CreateAnother(state.clone());
        assert_eq!(
            decide(&key, &create, &me, "t", "fp", now).unwrap(),
            Decision::CreateAnother
        );
        assert_eq!(
            decide(&key, &Answer::UseExisting(state.clone()), &me, "t", "fp", now).unwrap(),
            Decision::UseExisting("PO-SBY-000031".into())
        );
        assert!(decide(&key, &create, &caller("buyer-jkt"), "t", "fp", now).is_err());
        assert!(decide(&key, &create, &me, "t", "other", now).is_err());
        assert!(decide(&key, &create, &me, "u", "fp", now).is_err());
        let later = now + chrono::Duration::seconds(STATE_TTL_SECONDS);
        assert!(decide(&key, &create, &me, "t", "fp", later).is_err());
        let other_key = CursorKey::from_secret(b"fedcba9876543210fedcba9876543210", "test");
        assert!(decide(&other_key, &create, &me, "t", "fp", now).is_err());
        let forged = state.replacen("s1.", "s1.x", 1);
        assert!(decide(&key, &Answer::CreateAnother(forged), &me, "t", "fp", now).is_err());
    }

    #[test]
    fn a_confirmation_header_names_its_decision() {
        assert_eq!(
            Answer::parse("create-another s1.a.b").unwrap(),
            Answer::CreateAnother("s1.a.b".into())
        );
        assert_eq!(
            Answer::parse(" use-existing s1.a.b ").unwrap(),
            Answer::UseExisting("s1.a.b".into())
        );
        assert!(Answer::parse("yes").is_err());
        assert!(Answer::parse("create-another ").is_err());
    }
}
