//! What a draft holds once its key is looked up, for every way it is
//! committed (in draftline's transaction: [`super::atomic`]; in the ERP
//! under a lease: [`super::external`]): the call and its key ([`Held`]),
//! what a created draft leaves ([`Recorded`]), and the answer for a key
//! still in flight. Its siblings import it; it imports none of them.

use draftline_contract::error::ToolError;
use draftline_contract::tool::{Call, DocumentRef, Stakes};
use http::StatusCode;

use super::App;
use super::outcome::{Success, outcome};
use crate::audit::{AuditRecord, CallFacts, KeyFacts};
use crate::confirm::Consumption;
use crate::events::Event;
use crate::idempotency::{IdempotencyKey, IdempotencyRecord, IdempotencyStore, StoredResponse};

/// What a draft's commit is made of, besides its document: the call, its
/// key and the person's answer it consumes.
pub(super) struct Held<'a> {
    pub(super) call: &'a Call<'a>,
    pub(super) facts: &'a CallFacts,
    pub(super) name: &'a str,
    pub(super) key_facts: &'a KeyFacts,
    pub(super) owner: &'a str,
    pub(super) store: &'a IdempotencyStore<'a>,
    pub(super) key: &'a IdempotencyKey,
    pub(super) consumption: Option<&'a Consumption>,
}

pub(super) fn in_flight(key: &IdempotencyKey, after: u64) -> ToolError {
    ToolError::InFlight {
        message: format!(
            "A call with idempotency key '{key}' is still being processed. No second draft was created. \
             Retry this same call unchanged in {after} second(s) to get its result."
        ),
        retry_after_seconds: after,
    }
}

/// What a created draft leaves, built once from its outcome for both
/// paths (atomic and ERP): the answer, the key record that replays it, the
/// audit item and the event that announces the draft, all as of `now`.
pub(super) struct Recorded {
    pub(super) now: chrono::DateTime<chrono::Utc>,
    pub(super) result: Result<Success, ToolError>,
    pub(super) record: IdempotencyRecord,
    pub(super) audit: AuditRecord,
    pub(super) event: Event,
}

impl App {
    /// The [`Recorded`] of the draft `held` created as `document`
    /// (committing the company to `stakes`), answering `data`.
    pub(super) fn record_created(
        &self,
        held: &Held<'_>,
        data: serde_json::Value,
        (document, stakes): (DocumentRef, &Stakes),
    ) -> Recorded {
        let Held {
            call,
            facts,
            name,
            key_facts,
            owner,
            ..
        } = *held;
        let now = self.clock.now();
        let event = Event::created(call, &document, stakes, now);
        let stored = StoredResponse {
            status: StatusCode::CREATED,
            data: data.clone(),
            document: Some(document.clone()),
        };
        let record = IdempotencyRecord::completed(
            name,
            &key_facts.fingerprint,
            owner,
            stored,
            call.request_id,
            now,
            self.config.idempotency_ttl,
        );
        let result = Ok(Success {
            status: StatusCode::CREATED,
            data,
            replayed: false,
            document: Some(document),
        });
        let audit = AuditRecord::new(facts, call.caller, &outcome(&result, Some(key_facts), true));
        Recorded {
            now,
            result,
            record,
            audit,
            event,
        }
    }
}
