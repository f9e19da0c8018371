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
//! for another tool, for other input or under another idempotency key is
//! refused (`400`, nothing created).
//!
//! A "create another" answer is **single use**: the state carries a nonce,
//! and the write that creates the draft also writes the nonce's
//! [`Consumption`] item under `attribute_not_exists(pk)` — in the draft's
//! own transaction on the built-in backend, with the key's claim before the
//! ERP write on an external one. A second use creates nothing and says so;
//! the confirmed call's own retry is still a replay (its key record answers
//! first). A claim given back because the ERP wrote nothing gives the
//! nonce back too, so the same confirmed call may be retried.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorKey;
use draftline_contract::identity::Caller;
use draftline_contract::store::{Attributes, TableKey, Value, Write};
use draftline_contract::tool::Decision;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::idempotency::IdempotencyKey;

/// How long a question may be answered.
pub const STATE_TTL_SECONDS: i64 = 15 * 60;

/// How long a used confirmation's nonce is kept after its state expired
/// (then DynamoDB's TTL removes it: the state itself no longer opens).
const CONSUMED_KEPT_SECONDS: i64 = 3600;

/// The `inputRequests` key of the elicitation (MCP 2026-07-28).
pub const ELICITATION_KEY: &str = "draftline_near_duplicate";

/// The `_meta` key of a 2025-11-25 confirmation.
pub const META_KEY: &str = "io.draftline/confirm";

/// The HTTP header of a confirmation.
pub const HEADER: &str = "draftline-confirm";

/// The most characters a request state has (the header's schema says so too).
pub const MAX_STATE_LEN: usize = 2048;

const PURPOSE: &[u8] = b"draftline/request-state/v2";
const VERSION: &str = "s2";

/// What a sealed state binds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    t: String,
    b: String,
    u: String,
    tool: String,
    fp: String,
    /// The number of the open draft the question was about.
    n: String,
    /// The digest of the idempotency key the question was asked under.
    k: String,
    /// The nonce a "create another" answer consumes.
    j: String,
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
        if state.is_empty() || state.len() > MAX_STATE_LEN {
            return Err(invalid());
        }
        match decision {
            "create-another" => Ok(Self::CreateAnother(state.to_owned())),
            "use-existing" => Ok(Self::UseExisting(state.to_owned())),
            _ => Err(invalid()),
        }
    }
}

/// A checked answer: what the person decided, and for "create another"
/// the one-time nonce the creating write consumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    /// The decision the tool acts on.
    pub decision: Decision,
    /// The open draft the question was about.
    pub existing: String,
    /// For "create another": what the creating write consumes.
    pub consumption: Option<Consumption>,
}

/// The single use of a "create another" answer: an item keyed by the
/// state's nonce, written once under `attribute_not_exists(pk)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumption {
    nonce: String,
    /// Until when the item is kept (epoch seconds; DynamoDB TTL).
    expires_at: i64,
}

impl Consumption {
    fn key(&self, caller: &Caller) -> TableKey {
        TableKey {
            pk: format!("T#{}#CONFIRM#{}", caller.tenant(), self.nonce),
            sk: "CONFIRM".to_owned(),
        }
    }

    /// The write that consumes the answer: it fails (condition) when the
    /// answer was used already.
    pub fn put(&self, caller: &Caller, request_id: &str) -> Write {
        let TableKey { pk, sk } = self.key(caller);
        Write::PutNew(Attributes::from([
            ("pk".to_owned(), Value::S(pk)),
            ("sk".to_owned(), Value::S(sk)),
            ("kind".to_owned(), Value::s("confirmation")),
            ("request_id".to_owned(), Value::s(request_id)),
            ("expires_at".to_owned(), Value::n(self.expires_at)),
        ]))
    }

    /// The write that gives the answer back (the claim it was consumed
    /// with is released: nothing was created).
    pub fn give_back(&self, caller: &Caller) -> Write {
        Write::Delete(self.key(caller), None)
    }
}

/// The error of an answer that was already used to create a draft.
pub fn already_used() -> ToolError {
    refused(
        "it was already used: one confirmation creates one draft, and this one created its draft already. If you \
         are retrying that same call, resend it exactly (same key, same arguments) to get that draft back",
    )
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

/// The digest a state keeps of the idempotency key it was asked under.
fn key_digest(caller: &Caller, key: &IdempotencyKey) -> String {
    let mut digest = Sha256::new();
    digest.update(caller.tenant().as_str().as_bytes());
    digest.update([0]);
    digest.update(key.storage_key(caller).as_bytes());
    hex::encode(&digest.finalize()[..16])
}

/// What a question is about: the call it was asked of.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub caller: &'a Caller,
    pub tool: &'a str,
    /// The fingerprint of tool + input.
    pub fingerprint: &'a str,
    /// The idempotency key of the call.
    pub key: &'a IdempotencyKey,
}

/// Seals the state of a question about draft `number` for this call.
pub fn seal(cursors: &CursorKey, asked: &Asked<'_>, number: &str, now: DateTime<Utc>) -> Result<String, ToolError> {
    let state = State {
        t: asked.caller.tenant().to_string(),
        b: asked.caller.branch().to_string(),
        u: asked.caller.user().to_string(),
        tool: asked.tool.to_owned(),
        fp: asked.fingerprint.to_owned(),
        n: number.to_owned(),
        k: key_digest(asked.caller, asked.key),
        j: ulid::Ulid::new().to_string(),
        exp: now.timestamp().saturating_add(STATE_TTL_SECONDS),
    };
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&state).map_err(ToolError::internal)?);
    let tag = URL_SAFE_NO_PAD.encode(cursors.tag(PURPOSE, payload.as_bytes()));
    Ok(format!("{VERSION}.{payload}.{tag}"))
}

/// The decision an answer carries, if its state was sealed by this
/// deployment for exactly this call (caller, tool, input and idempotency
/// key) and has not expired. Whether a "create another" was used already
/// is decided by the write that creates the draft ([`Consumption`]).
pub fn decide(
    cursors: &CursorKey,
    answer: &Answer,
    call: &Asked<'_>,
    now: DateTime<Utc>,
) -> Result<Confirmed, ToolError> {
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
    let expected = cursors.tag(PURPOSE, payload.as_bytes());
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
    let caller = call.caller;
    let mine =
        state.t == caller.tenant().as_str() && state.b == caller.branch().as_str() && state.u == caller.user().as_str();
    if !mine {
        return Err(refused("the question was asked of another caller"));
    }
    if state.tool != call.tool || state.fp != call.fingerprint {
        return Err(refused(
            "the question was asked about another call (other tool or other arguments)",
        ));
    }
    if state.k != key_digest(caller, call.key) {
        return Err(refused(
            "it answers the call it was asked about under that call's own idempotency key (its Idempotency-Key, or \
             its X-Agent-Run-Id and client_ref), and this call has another key. Resend the confirmation with the \
             original call's key",
        ));
    }
    Ok(if create {
        Confirmed {
            decision: Decision::CreateAnother,
            existing: state.n,
            consumption: Some(Consumption {
                nonce: state.j,
                expires_at: state.exp.saturating_add(CONSUMED_KEPT_SECONDS),
            }),
        }
    } else {
        Confirmed {
            decision: Decision::UseExisting(state.n.clone()),
            existing: state.n,
            consumption: None,
        }
    })
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn caller(user: &str) -> Caller {
        crate::testing::caller("demo", "SBY-01", user, "purchasing:draft")
    }

    fn key(value: &str) -> IdempotencyKey {
        IdempotencyKey::parse_header(value).unwrap()
    }

    #[test]
    fn a_state_answers_only_its_own_call_under_its_own_key_before_it_expires() {
        let cursors = CursorKey::from_secret(b"0123456789abcdef0123456789abcdef", "test");
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap();
        let me = caller("buyer-sby");
        let k2 = key("k2");
        let asked = Asked {
            caller: &me,
            tool: "t",
            fingerprint: "fp",
            key: &k2,
        };
        let state = seal(&cursors, &asked, "PO-SBY-000031", now).unwrap();
        let create = Answer::CreateAnother(state.clone());
        let confirmed = decide(&cursors, &create, &asked, now).unwrap();
        assert_eq!(confirmed.decision, Decision::CreateAnother);
        assert_eq!(confirmed.existing, "PO-SBY-000031");
        assert!(confirmed.consumption.is_some());
        let existing = decide(&cursors, &Answer::UseExisting(state.clone()), &asked, now).unwrap();
        assert_eq!(existing.decision, Decision::UseExisting("PO-SBY-000031".into()));
        assert_eq!(existing.consumption, None, "choosing the existing draft writes nothing");

        let other = caller("buyer-jkt");
        let k3 = key("k3");
        let refusals = [
            (
                Asked {
                    caller: &other,
                    ..asked
                },
                "another caller",
            ),
            (
                Asked {
                    fingerprint: "other",
                    ..asked
                },
                "another call",
            ),
            (Asked { tool: "u", ..asked }, "another call"),
            (Asked { key: &k3, ..asked }, "another key"),
        ];
        for (call, why) in refusals {
            let err = decide(&cursors, &create, &call, now).unwrap_err();
            assert!(err.public_message().contains(why), "{why}: {}", err.public_message());
        }
        let later = now + chrono::Duration::seconds(STATE_TTL_SECONDS);
        assert!(decide(&cursors, &create, &asked, later).is_err());
        let other_cursors = CursorKey::from_secret(b"fedcba9876543210fedcba9876543210", "test");
        assert!(decide(&other_cursors, &create, &asked, now).is_err());
        let forged = state.replacen("s2.", "s2.x", 1);
        assert!(decide(&cursors, &Answer::CreateAnother(forged), &asked, now).is_err());
        // Two questions of the same call have different nonces.
        let again = seal(&cursors, &asked, "PO-SBY-000031", now).unwrap();
        let again = decide(&cursors, &Answer::CreateAnother(again), &asked, now).unwrap();
        assert_ne!(again.consumption, confirmed.consumption);
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
