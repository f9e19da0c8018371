//! The key record: what DynamoDB remembers about a key (its answer typed:
//! status, data, document), and what a new call with that key does next
//! ([`NextAction`], decided here once).

use chrono::{DateTime, Utc};
use http::StatusCode;

use crate::policy::Reservation;
use crate::storage::mapped;
use draftline_contract::store::Attributes;
use draftline_contract::tool::DocumentRef;

/// The record's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordStatus {
    /// Claimed by a worker holding a lease; no response yet.
    InProgress,
    /// Done; the response is stored.
    Completed,
}

impl RecordStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "IN_PROGRESS",
            Self::Completed => "COMPLETED",
        }
    }
}

/// What a completed key stores of its call: the answer, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// The status the call answered (201 for a created draft).
    pub status: StatusCode,
    /// The answer's `data`.
    pub data: serde_json::Value,
    /// The document the call created.
    pub document: Option<DocumentRef>,
}

/// One idempotency key record.
#[derive(Debug, Clone, PartialEq)]
pub struct IdempotencyRecord {
    /// The tool the key was used with.
    pub tool: String,
    /// Fingerprint of tool + validated input.
    pub fingerprint: String,
    /// Who used the key (`<branch>/<user>`); another caller never gets a replay.
    pub owner: String,
    /// In progress or completed.
    pub status: RecordStatus,
    /// The stored answer (completed records).
    pub response: Option<StoredResponse>,
    /// The request that created the record.
    pub request_id: String,
    /// When the record was written.
    pub created_at: DateTime<Utc>,
    /// When DynamoDB TTL may delete it (epoch seconds).
    pub expires_at: i64,
    /// For in-progress records: when the lease ends (epoch milliseconds).
    pub lease_until_ms: Option<i64>,
    /// For in-progress records: the lease holder's token (fencing).
    pub lease_token: Option<String>,
    /// For claimed records: which use of the key this is. Part of the key an
    /// external system stores, so a worker taking over a lapsed lease finds
    /// the document of the same use, and a key used again after its record
    /// expired starts a new document.
    pub generation: Option<String>,
    /// For claimed records: what the claim counted of the tenant's limits,
    /// given back by a release and carried on by a takeover.
    pub reserved: Option<Reservation>,
}

/// What a call with a key does next, decided once from the key's record
/// (zero2prod's `try_processing`): the caller matches on it once.
#[derive(Debug, Clone, PartialEq)]
pub enum NextAction {
    /// No live record: start a new use of the key.
    Proceed,
    /// Same caller, same tool and input, completed: send the stored answer again.
    Replay(StoredResponse),
    /// Another call holds the key: 409, retry after this many seconds.
    InFlight(u64),
    /// The key was used by another caller or for other input: 422.
    Conflict,
    /// This call's own claim whose lease lapsed (its worker died, perhaps
    /// after the ERP write): continue that use of the key, looking for its
    /// document first.
    LeaseExpired {
        /// The use of the key to continue.
        generation: String,
        /// What the lapsed claim counted of the tenant's limits: the
        /// takeover keeps it and counts nothing again.
        reserved: Option<Reservation>,
    },
}

/// The `Retry-After` of a key whose lease ends at `until_ms`: the whole
/// seconds left, and one more, between 1 and 30.
pub(crate) fn seconds_until(until_ms: i64, now: DateTime<Utc>) -> u64 {
    ((until_ms - now.timestamp_millis()) / 1000 + 1).clamp(1, 30) as u64
}

impl IdempotencyRecord {
    /// Decides what a call with `fingerprint` by `owner` does next.
    pub fn next_action(&self, fingerprint: &str, owner: &str, now: DateTime<Utc>) -> NextAction {
        if self.expires_at <= now.timestamp() {
            return NextAction::Proceed;
        }
        if self.owner != owner || self.fingerprint != fingerprint {
            return NextAction::Conflict;
        }
        match (self.status, &self.response) {
            (RecordStatus::InProgress, _) => match self.lease_until_ms {
                Some(until) if until > now.timestamp_millis() => NextAction::InFlight(seconds_until(until, now)),
                _ => match &self.generation {
                    Some(generation) => NextAction::LeaseExpired {
                        generation: generation.clone(),
                        reserved: self.reserved.clone(),
                    },
                    None => NextAction::Proceed,
                },
            },
            (RecordStatus::Completed, Some(response)) => NextAction::Replay(response.clone()),
            // A completed record whose answer cannot be read back: its call
            // succeeded, so a retry answers that, without data.
            (RecordStatus::Completed, None) => NextAction::Replay(StoredResponse {
                status: StatusCode::OK,
                data: serde_json::Value::Null,
                document: None,
            }),
        }
    }

    /// A completed record holding `response`.
    #[allow(clippy::too_many_arguments)]
    pub fn completed(
        tool: &str,
        fingerprint: &str,
        owner: &str,
        response: StoredResponse,
        request_id: &str,
        now: DateTime<Utc>,
        ttl: std::time::Duration,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            fingerprint: fingerprint.to_owned(),
            owner: owner.to_owned(),
            status: RecordStatus::Completed,
            response: Some(response),
            request_id: request_id.to_owned(),
            created_at: now,
            expires_at: now.timestamp() + ttl.as_secs() as i64,
            lease_until_ms: None,
            lease_token: None,
            generation: None,
            reserved: None,
        }
    }

    /// The item attributes (without the key).
    pub fn to_attributes(&self) -> Attributes {
        let document = self.response.as_ref().and_then(|r| r.document.as_ref());
        let stored = Stored {
            tool: self.tool.clone(),
            fingerprint: self.fingerprint.clone(),
            owner: self.owner.clone(),
            status: self.status.as_str().to_owned(),
            http_status: self.response.as_ref().map_or(0, |r| r.status.as_u16()),
            request_id: self.request_id.clone(),
            created_at: self.created_at.to_rfc3339(),
            expires_at: self.expires_at,
            kind: KIND.to_owned(),
            response: self.response.as_ref().map(|r| r.data.to_string()),
            document_id: document.map(|d| d.id.clone()),
            document_number: document.map(|d| d.number.clone()),
            document_kind: document.map(|d| d.kind.clone()),
            lease_until: self.lease_until_ms,
            lease_token: self.lease_token.clone(),
            generation: self.generation.clone(),
            reserved: self.reserved.as_ref().map(Reservation::to_text),
        };
        // Strings, numbers and absent options only: serialising cannot fail.
        mapped::to_attributes(&stored).unwrap_or_default()
    }

    /// Reads a record from an item; `None` if the item is not a key record.
    pub fn from_item(item: Attributes) -> Option<Self> {
        let stored: Stored = mapped::from_attributes(item)?;
        let status = match stored.status.as_str() {
            "IN_PROGRESS" => RecordStatus::InProgress,
            "COMPLETED" => RecordStatus::Completed,
            _ => return None,
        };
        let document = stored
            .document_id
            .zip(stored.document_number)
            .map(|(id, number)| DocumentRef {
                id,
                number,
                kind: stored.document_kind.unwrap_or_default(),
            });
        let response = stored
            .response
            .and_then(|text| serde_json::from_str(&text).ok())
            .map(|data| StoredResponse {
                status: StatusCode::from_u16(stored.http_status).unwrap_or(StatusCode::OK),
                data,
                document,
            });
        Some(Self {
            tool: stored.tool,
            fingerprint: stored.fingerprint,
            owner: stored.owner,
            status,
            response,
            request_id: stored.request_id,
            created_at: DateTime::parse_from_rfc3339(&stored.created_at)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_default(),
            expires_at: stored.expires_at,
            lease_until_ms: stored.lease_until,
            lease_token: stored.lease_token,
            generation: stored.generation,
            reserved: stored.reserved.as_deref().and_then(Reservation::from_text),
        })
    }
}

/// The `kind` of every key record.
const KIND: &str = "idempotency_key";

/// A key record as the table stores it (DESIGN.md, table layout), mapped by
/// `serde_dynamo`: strings as `S`, numbers as `N`, an absent option absent.
/// Other attributes of the item (its key) are ignored when read.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    tool: String,
    fingerprint: String,
    owner: String,
    status: String,
    /// The stored answer's HTTP status (0 while in progress).
    #[serde(default)]
    http_status: u16,
    #[serde(default)]
    request_id: String,
    #[serde(default)]
    created_at: String,
    expires_at: i64,
    #[serde(default)]
    kind: String,
    /// The answer's body, as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    document_kind: Option<String>,
    /// When the claim's lease ends (epoch milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_until: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generation: Option<String>,
    /// What the claim reserved of the tenant's limits, as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reserved: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use draftline_contract::store::Value;

    fn record(now: DateTime<Utc>) -> IdempotencyRecord {
        IdempotencyRecord::completed(
            "t",
            "fp",
            "SBY-01/buyer-sby",
            StoredResponse {
                status: StatusCode::CREATED,
                data: serde_json::json!({"n": 1}),
                document: Some(DocumentRef {
                    id: "d1".into(),
                    number: "PO-SBY-000001".into(),
                    kind: "purchase_order".into(),
                }),
            },
            "r1",
            now,
            std::time::Duration::from_secs(86_400),
        )
    }

    #[test]
    fn a_record_is_stored_attribute_for_attribute_as_before_serde_dynamo_mapped_it() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let s = Value::s;
        let n = Value::n;
        let completed = Attributes::from([
            ("tool".to_owned(), s("t")),
            ("fingerprint".to_owned(), s("fp")),
            ("owner".to_owned(), s("SBY-01/buyer-sby")),
            ("status".to_owned(), s("COMPLETED")),
            ("http_status".to_owned(), n(201)),
            ("request_id".to_owned(), s("r1")),
            ("created_at".to_owned(), s("2026-11-29T10:00:00+00:00")),
            ("expires_at".to_owned(), n(now.timestamp() + 86_400)),
            ("kind".to_owned(), s("idempotency_key")),
            ("response".to_owned(), s(r#"{"n":1}"#)),
            ("document_id".to_owned(), s("d1")),
            ("document_number".to_owned(), s("PO-SBY-000001")),
            ("document_kind".to_owned(), s("purchase_order")),
        ]);
        assert_eq!(record(now).to_attributes(), completed);

        let mut claim = record(now);
        claim.status = RecordStatus::InProgress;
        claim.response = None;
        claim.lease_until_ms = Some(1_764_410_404_500);
        claim.lease_token = Some("lt".into());
        claim.generation = Some("g1".into());
        let mut claimed = completed.clone();
        for gone in ["response", "document_id", "document_number", "document_kind"] {
            claimed.remove(gone);
        }
        claimed.insert("status".into(), s("IN_PROGRESS"));
        claimed.insert("http_status".into(), n(0));
        claimed.insert("lease_until".into(), n(1_764_410_404_500));
        claimed.insert("lease_token".into(), s("lt"));
        claimed.insert("generation".into(), s("g1"));
        assert_eq!(claim.to_attributes(), claimed);
        assert_eq!(IdempotencyRecord::from_item(claimed.clone()), Some(claim));

        // Not a key record: no status, or one no draftline writes.
        let mut odd = completed.clone();
        odd.insert("status".into(), s("DONE"));
        assert_eq!(IdempotencyRecord::from_item(odd.clone()), None);
        odd = completed;
        odd.remove("expires_at");
        assert_eq!(IdempotencyRecord::from_item(odd.clone()), None);
    }

    #[test]
    fn a_record_round_trips_through_its_item() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let rec = record(now);
        assert_eq!(IdempotencyRecord::from_item(rec.to_attributes()), Some(rec));
    }

    #[test]
    fn the_next_action_follows_fingerprint_owner_expiry_and_lease() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let rec = record(now);
        match rec.next_action("fp", "SBY-01/buyer-sby", now) {
            NextAction::Replay(stored) => {
                assert_eq!(stored.status, StatusCode::CREATED);
                assert_eq!(stored.document.map(|d| d.number).as_deref(), Some("PO-SBY-000001"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rec.next_action("other", "SBY-01/buyer-sby", now), NextAction::Conflict);
        assert_eq!(rec.next_action("fp", "JKT-01/buyer-jkt", now), NextAction::Conflict);
        assert_eq!(
            rec.next_action("fp", "SBY-01/buyer-sby", now + chrono::Duration::days(2)),
            NextAction::Proceed
        );
        let mut leased = rec.clone();
        leased.status = RecordStatus::InProgress;
        leased.response = None;
        leased.lease_until_ms = Some(now.timestamp_millis() + 4_500);
        assert_eq!(
            leased.next_action("fp", "SBY-01/buyer-sby", now),
            NextAction::InFlight(5)
        );
        let lapsed = now + chrono::Duration::seconds(5);
        assert_eq!(
            leased.next_action("fp", "SBY-01/buyer-sby", lapsed),
            NextAction::Proceed
        );
        leased.generation = Some("g1".into());
        assert_eq!(
            leased.next_action("fp", "SBY-01/buyer-sby", lapsed),
            NextAction::LeaseExpired {
                generation: "g1".into(),
                reserved: None,
            }
        );
    }
}
