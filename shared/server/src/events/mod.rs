//! The events people and systems receive (DESIGN.md, "Notifications"):
//! `draft.created` when an agent draft exists, `draft.decided` when a
//! person approved or rejected one.
//!
//! An event is an outbox item written in the same transaction as what it
//! announces: the draft's ([`crate::idempotency::KeyTransaction`], its
//! event part), the write that completes an ERP draft's key, or the
//! decision's. So an event exists if and only if its draft or decision
//! does; a replay, a refusal, a question or a failed call writes none.
//! Delivery reads the outbox afterwards ([`sweep`]), sending webhooks to
//! the endpoints of each tenant's [`settings`], signed by the Standard
//! Webhooks specification ([`sign`]) and only where [`endpoint`] allows.
//!
//! Items live under `T#<tenant>#OUTBOX`, sorted by event id (`evt_` and a
//! ULID: time order). Each holds the payload as it is delivered (the
//! Standard Webhooks envelope: `type`, `timestamp`, `data`), its type, and
//! its delivery state: `pending` from the start, due at once (in the
//! `gsi1` index's `OUTBOX#DUE` partition, where a sweep finds it). The payload
//! carries ids, the total, the decision and `review_url`: never a token,
//! the agent's note or an argument value.

use chrono::{DateTime, SecondsFormat, Utc};
use draftline_contract::policy::amount::format_hundredths;
use draftline_contract::store::{Attributes, Value, Write};
use draftline_contract::tool::{Call, DocumentRef, Stakes, review_url};
use serde::{Deserialize, Serialize};

pub mod delivery;
pub mod endpoint;
pub mod mail;
pub mod settings;
pub mod sign;
pub mod sweep;

/// The `kind` of every outbox item.
pub const EVENT_KIND: &str = "event";

/// What an event announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// An agent draft exists.
    #[serde(rename = "draft.created")]
    DraftCreated,
    /// A person approved or rejected an agent draft.
    #[serde(rename = "draft.decided")]
    DraftDecided,
}

impl EventType {
    /// The type as delivered (`draft.created`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DraftCreated => "draft.created",
            Self::DraftDecided => "draft.decided",
        }
    }
}

/// One event: its id (the `webhook-id` of every delivery attempt) and the
/// payload delivered, the Standard Webhooks envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// `evt_<ulid>`: unique, in time order.
    #[serde(skip)]
    pub id: String,
    /// When it is first due for delivery (epoch seconds): when it happened.
    #[serde(skip)]
    due_at: i64,
    /// The person the agent drafted for (kept beside the payload, for the
    /// e-mail a decision sends them; never delivered).
    #[serde(skip)]
    drafted_for: Option<String>,
    /// The span of the call that wrote it, if a call did (kept beside the
    /// payload: each delivery attempt's span links to it; never delivered).
    #[serde(skip)]
    traceparent: Option<String>,
    /// What it announces.
    #[serde(rename = "type")]
    pub kind: EventType,
    /// When it happened (RFC 3339, UTC).
    pub timestamp: String,
    /// What happened.
    pub data: EventData,
}

/// What an event says of its draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventData {
    /// The tenant.
    pub tenant: String,
    /// The branch the document is of.
    pub branch: String,
    /// The document: its id, number and kind.
    pub document: DocumentRef,
    /// The agent run that drafted it, if any.
    pub run_id: Option<String>,
    /// The tool call that drafted it, if any.
    pub tool_call_id: Option<String>,
    /// Its total, if it has one.
    pub total: Option<EventTotal>,
    /// The person's decision (`draft.decided` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<EventDecision>,
    /// The page where a person reviews it.
    pub review_url: String,
}

/// A total: an exact amount with two decimals, and its currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventTotal {
    /// `"2880000.00"`.
    pub amount: String,
    /// `IDR`.
    pub currency: String,
}

/// A person's decision, as a `draft.decided` event tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventDecision {
    /// `approved` or `rejected`.
    pub verdict: String,
    /// Who decided (their user id).
    pub decided_by: String,
    /// A rejection's reason: the person's message for the run.
    pub reason: Option<String>,
}

impl Event {
    /// The `draft.created` event of the draft `call` created as `document`,
    /// committing the company to `stakes`, at `now`.
    pub fn created(call: &Call<'_>, document: &DocumentRef, stakes: &Stakes, now: DateTime<Utc>) -> Self {
        let total = stakes.total.as_ref().map(|total| EventTotal {
            amount: format_hundredths(total.hundredths),
            currency: total.currency.clone(),
        });
        let event = Self::new(
            EventType::DraftCreated,
            now,
            EventData {
                tenant: call.caller.tenant().to_string(),
                branch: call.caller.branch().to_string(),
                document: document.clone(),
                run_id: call.agent.run_id.clone(),
                tool_call_id: call.agent.tool_call_id.clone(),
                total,
                decision: None,
                review_url: review_url(call.review_pages, &document.number),
            },
        );
        Self {
            drafted_for: Some(call.caller.user().to_string()),
            ..event
        }
    }

    /// The `draft.decided` event of a person's `decision` on `document` of
    /// `(tenant, branch)` (a draft of `drafted`: its run, total and whom it
    /// was for), whose review page is under `review_pages`, at `now`.
    pub fn decided(
        (tenant, branch): (&str, &str),
        (document, drafted): (&DocumentRef, Drafted),
        decision: EventDecision,
        review_pages: &str,
        now: DateTime<Utc>,
    ) -> Self {
        let drafted_for = drafted.drafted_for.clone();
        let event = Self::new(
            EventType::DraftDecided,
            now,
            EventData {
                tenant: tenant.to_owned(),
                branch: branch.to_owned(),
                document: document.clone(),
                run_id: drafted.run_id,
                // A document does not keep the tool call that drafted it
                // (the run page shows it).
                tool_call_id: None,
                total: drafted.total,
                decision: Some(decision),
                review_url: review_url(review_pages, &document.number),
            },
        );
        Self { drafted_for, ..event }
    }

    fn new(kind: EventType, now: DateTime<Utc>, data: EventData) -> Self {
        Self {
            id: format!("evt_{}", ulid::Ulid::new().to_string().to_lowercase()),
            kind,
            due_at: now.timestamp(),
            drafted_for: None,
            traceparent: draftline_http::trace::current_traceparent(),
            timestamp: now.to_rfc3339_opts(SecondsFormat::Millis, true),
            data,
        }
    }

    /// Its outbox item, new (no item has its id), pending and due at once.
    pub fn put(&self) -> Write {
        let payload = serde_json::to_string(self).unwrap_or_default();
        let mut item = Attributes::from([
            ("pk".to_owned(), Value::S(format!("T#{}#OUTBOX", self.data.tenant))),
            ("sk".to_owned(), Value::S(format!("EVT#{}", self.id))),
            ("kind".to_owned(), Value::s(EVENT_KIND)),
            ("event_id".to_owned(), Value::S(self.id.clone())),
            ("event_type".to_owned(), Value::s(self.kind.as_str())),
            ("state".to_owned(), Value::s("pending")),
            ("attempts".to_owned(), Value::n(0)),
            ("due_at".to_owned(), Value::n(self.due_at)),
            (delivery::DUE_INDEX.pk.to_owned(), Value::s(delivery::DUE_PARTITION)),
            (
                delivery::DUE_INDEX.sk.to_owned(),
                Value::S(delivery::due_sort_key(self.due_at, &format!("EVT#{}", self.id))),
            ),
            ("payload".to_owned(), Value::S(payload)),
        ]);
        if let Some(person) = &self.drafted_for {
            item.insert("drafted_for".to_owned(), Value::s(person));
        }
        if let Some(traceparent) = &self.traceparent {
            item.insert("traceparent".to_owned(), Value::s(traceparent));
        }
        Write::PutNew(item)
    }
}

/// What a decided draft's event repeats of how it was drafted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drafted {
    /// The agent run that drafted it.
    pub run_id: Option<String>,
    /// Its total.
    pub total: Option<EventTotal>,
    /// The person it was drafted for (their user id).
    pub drafted_for: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outbox_item_holds_the_envelope_due_at_once_under_the_events_id() {
        let event = Event::new(
            EventType::DraftCreated,
            "2026-11-29T09:00:00Z".parse().unwrap(),
            EventData {
                tenant: "demo".into(),
                branch: "SBY-01".into(),
                document: DocumentRef {
                    id: "po_1".into(),
                    number: "PO-SBY-000004".into(),
                    kind: "purchase_order".into(),
                },
                run_id: Some("run-1".into()),
                tool_call_id: None,
                total: Some(EventTotal {
                    amount: "2880000.00".into(),
                    currency: "IDR".into(),
                }),
                decision: None,
                review_url: review_url("https://x.test/review/", "PO-SBY-000004"),
            },
        );
        let Write::PutNew(item) = event.put() else {
            panic!("an event is a new item");
        };
        assert_eq!(item["pk"], Value::s("T#demo#OUTBOX"));
        assert_eq!(item["sk"], Value::S(format!("EVT#{}", event.id)));
        assert_eq!(item["state"], Value::s("pending"));
        assert_eq!(item["due_at"], Value::n(1_795_942_800));
        let payload: serde_json::Value = serde_json::from_str(item["payload"].as_s().unwrap()).unwrap();
        assert_eq!(payload["type"], "draft.created");
        assert_eq!(payload["timestamp"], "2026-11-29T09:00:00.000Z");
        assert_eq!(
            payload["data"]["review_url"],
            "https://x.test/review/documents/PO-SBY-000004"
        );
        assert_eq!(payload["data"]["total"]["amount"], "2880000.00");
        assert!(payload.get("id").is_none() && payload["data"].get("decision").is_none());
        assert_eq!(item["event_id"], Value::S(event.id.clone()));
        assert_eq!(item["event_type"], Value::s("draft.created"));
        assert_eq!(payload, serde_json::to_value(&event).unwrap());
    }
}
