//! The key record: what DynamoDB remembers about a key, and what it means
//! for a new call with that key.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

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
    /// The stored HTTP status (completed records).
    pub http_status: u16,
    /// The stored response `data`, as JSON text (completed records).
    pub response: Option<String>,
    /// The document the call created: (id, number, kind).
    pub document: Option<(String, String, String)>,
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
}

/// What a stored record means for a new call with the same key.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// Same caller, same tool and input, completed: send the stored response again.
    Replay {
        /// The stored status.
        http_status: u16,
        /// The stored data.
        data: serde_json::Value,
        /// The stored document (id, number, kind).
        document: Option<(String, String, String)>,
    },
    /// The key was used for something else: 422.
    Mismatch,
    /// Another call holds the key: 409, retry after this many seconds.
    InFlight(u64),
    /// The record is expired (TTL not yet swept) or its lease lapsed: treat as absent.
    Vacant,
}

impl IdempotencyRecord {
    /// Decides what a call with `fingerprint` by `owner` gets.
    pub fn resolve(&self, fingerprint: &str, owner: &str, now: DateTime<Utc>) -> Resolution {
        if self.expires_at <= now.timestamp() {
            return Resolution::Vacant;
        }
        if self.owner != owner || self.fingerprint != fingerprint {
            return Resolution::Mismatch;
        }
        match self.status {
            RecordStatus::InProgress => match self.lease_until_ms {
                Some(until) if until > now.timestamp_millis() => {
                    Resolution::InFlight(((until - now.timestamp_millis()) / 1000 + 1).clamp(1, 30) as u64)
                }
                _ => Resolution::Vacant,
            },
            RecordStatus::Completed => {
                let data = self
                    .response
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or(serde_json::Value::Null);
                Resolution::Replay {
                    http_status: self.http_status,
                    data,
                    document: self.document.clone(),
                }
            }
        }
    }

    /// A completed record holding `data`.
    #[allow(clippy::too_many_arguments)]
    pub fn completed(
        tool: &str,
        fingerprint: &str,
        owner: &str,
        http_status: u16,
        data: &serde_json::Value,
        document: Option<&DocumentRef>,
        request_id: &str,
        now: DateTime<Utc>,
        ttl: std::time::Duration,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            fingerprint: fingerprint.to_owned(),
            owner: owner.to_owned(),
            status: RecordStatus::Completed,
            http_status,
            response: Some(data.to_string()),
            document: document.map(|d| (d.id.clone(), d.number.clone(), d.kind.to_owned())),
            request_id: request_id.to_owned(),
            created_at: now,
            expires_at: now.timestamp() + ttl.as_secs() as i64,
            lease_until_ms: None,
            lease_token: None,
            generation: None,
        }
    }

    /// The item attributes (without the key).
    pub fn to_attributes(&self) -> HashMap<String, AttributeValue> {
        let mut item = HashMap::from([
            ("tool".to_owned(), AttributeValue::S(self.tool.clone())),
            ("fingerprint".to_owned(), AttributeValue::S(self.fingerprint.clone())),
            ("owner".to_owned(), AttributeValue::S(self.owner.clone())),
            ("status".to_owned(), AttributeValue::S(self.status.as_str().to_owned())),
            (
                "http_status".to_owned(),
                AttributeValue::N(self.http_status.to_string()),
            ),
            ("request_id".to_owned(), AttributeValue::S(self.request_id.clone())),
            ("created_at".to_owned(), AttributeValue::S(self.created_at.to_rfc3339())),
            ("expires_at".to_owned(), AttributeValue::N(self.expires_at.to_string())),
            ("kind".to_owned(), AttributeValue::S("idempotency_key".to_owned())),
        ]);
        if let Some(response) = &self.response {
            item.insert("response".into(), AttributeValue::S(response.clone()));
        }
        if let Some((id, number, kind)) = &self.document {
            item.insert("document_id".into(), AttributeValue::S(id.clone()));
            item.insert("document_number".into(), AttributeValue::S(number.clone()));
            item.insert("document_kind".into(), AttributeValue::S(kind.clone()));
        }
        if let Some(until) = self.lease_until_ms {
            item.insert("lease_until".into(), AttributeValue::N(until.to_string()));
        }
        if let Some(token) = &self.lease_token {
            item.insert("lease_token".into(), AttributeValue::S(token.clone()));
        }
        if let Some(generation) = &self.generation {
            item.insert("generation".into(), AttributeValue::S(generation.clone()));
        }
        item
    }

    /// Reads a record from an item; `None` if the item is not a key record.
    pub fn from_item(item: &HashMap<String, AttributeValue>) -> Option<Self> {
        let s = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        let n = |name: &str| {
            item.get(name)
                .and_then(|v| v.as_n().ok())
                .and_then(|v| v.parse::<i64>().ok())
        };
        let status = match s("status")?.as_str() {
            "IN_PROGRESS" => RecordStatus::InProgress,
            "COMPLETED" => RecordStatus::Completed,
            _ => return None,
        };
        Some(Self {
            tool: s("tool")?,
            fingerprint: s("fingerprint")?,
            owner: s("owner")?,
            status,
            http_status: n("http_status").and_then(|v| u16::try_from(v).ok()).unwrap_or(0),
            response: s("response"),
            document: s("document_id")
                .zip(s("document_number"))
                .map(|(id, number)| (id, number, s("document_kind").unwrap_or_default())),
            request_id: s("request_id").unwrap_or_default(),
            created_at: s("created_at")
                .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_default(),
            expires_at: n("expires_at")?,
            lease_until_ms: n("lease_until"),
            lease_token: s("lease_token"),
            generation: s("generation"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn record(now: DateTime<Utc>) -> IdempotencyRecord {
        IdempotencyRecord::completed(
            "t",
            "fp",
            "SBY-01/buyer-sby",
            201,
            &serde_json::json!({"n": 1}),
            None,
            "r1",
            now,
            std::time::Duration::from_secs(86_400),
        )
    }

    #[test]
    fn a_record_round_trips_through_its_item() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let rec = record(now);
        assert_eq!(IdempotencyRecord::from_item(&rec.to_attributes()), Some(rec));
    }

    #[test]
    fn resolution_follows_fingerprint_owner_expiry_and_lease() {
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let rec = record(now);
        assert!(matches!(
            rec.resolve("fp", "SBY-01/buyer-sby", now),
            Resolution::Replay { http_status: 201, .. }
        ));
        assert_eq!(rec.resolve("other", "SBY-01/buyer-sby", now), Resolution::Mismatch);
        assert_eq!(rec.resolve("fp", "JKT-01/buyer-jkt", now), Resolution::Mismatch);
        assert_eq!(
            rec.resolve("fp", "SBY-01/buyer-sby", now + chrono::Duration::days(2)),
            Resolution::Vacant
        );
        let mut leased = rec.clone();
        leased.status = RecordStatus::InProgress;
        leased.lease_until_ms = Some(now.timestamp_millis() + 4_500);
        assert_eq!(leased.resolve("fp", "SBY-01/buyer-sby", now), Resolution::InFlight(5));
        assert_eq!(
            leased.resolve("fp", "SBY-01/buyer-sby", now + chrono::Duration::seconds(5)),
            Resolution::Vacant
        );
    }
}
