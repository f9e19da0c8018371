//! The outbox's delivery items: one event to one endpoint
//! (`pk = T#<tenant>#OUTBOX`, `sk = DLV#<event id>#<endpoint id>`), as the
//! sweep writes and marks them ([`super::sweep`]), and as a tenant's
//! administrators read them and send a dead one again (the review pages).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::storage::Table;
use crate::storage::mapped::from_attributes;
use draftline_contract::error::ToolError;
use draftline_contract::identity::TenantId;
use draftline_contract::store::{Attributes, Condition, Index, Query, TableKey, Update, Value, Write};

/// The index a sweep reads due items from.
pub const DUE_INDEX: Index = Index {
    name: "gsi1",
    pk: "gsi1pk",
    sk: "gsi1sk",
};

/// The index partition of every item that is due, or will be.
pub const DUE_PARTITION: &str = "OUTBOX#DUE";

/// The `kind` of a delivery item.
pub const DELIVERY_KIND: &str = "delivery";

/// The index sort key of an item due at `due_at`.
pub fn due_sort_key(due_at: i64, sk: &str) -> String {
    format!("{due_at:012}#{sk}")
}

/// A delivery: one event to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub(super) pk: String,
    pub(super) sk: String,
    pub(super) kind: String,
    /// The event (the `webhook-id`).
    pub event_id: String,
    /// Its type.
    pub event_type: String,
    /// The endpoint's id in the settings, or `mail:<user id>` for an
    /// e-mail to that person.
    pub endpoint: String,
    /// The address of an e-mail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The body delivered.
    pub(super) payload: String,
    /// `pending`, `delivered` or `dead`.
    pub state: String,
    /// Attempts made (claimed).
    pub attempts: u32,
    /// When it is next due (epoch seconds).
    pub due_at: i64,
    /// When the event happened (epoch seconds): the retry window's start.
    pub since: i64,
    /// The last answer's status, if one came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<u16>,
    /// Why the last attempt failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When it was delivered (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
    /// The span of the call that wrote its event, which each attempt's
    /// span links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) gsi1pk: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) gsi1sk: Option<String>,
}

impl Delivery {
    /// The item's key.
    pub fn key(&self) -> TableKey {
        TableKey {
            pk: self.pk.clone(),
            sk: self.sk.clone(),
        }
    }

    /// The tenant whose outbox holds it.
    pub fn tenant(&self) -> Option<TenantId> {
        tenant_of(&self.pk)
    }

    /// The deliveries the outbox `event` (its item) fans out to, one per
    /// `(endpoint, e-mail address)`: pending and due at `now`, their retry
    /// window from when the event was due. `None` if the item is no event.
    pub(super) fn fanned_out(
        event: &Attributes,
        to: impl IntoIterator<Item = (String, Option<String>)>,
        now: i64,
    ) -> Option<Vec<Self>> {
        let s = |name: &str| event.get(name).and_then(Value::as_s).map(str::to_owned);
        let since = event.get("due_at").and_then(Value::as_n).and_then(|n| n.parse().ok());
        let (pk, event_id, event_type, payload) = (s("pk")?, s("event_id")?, s("event_type")?, s("payload")?);
        let traceparent = s("traceparent");
        let deliveries = to.into_iter().map(|(endpoint, to)| {
            let sk = format!("DLV#{event_id}#{endpoint}");
            Self {
                pk: pk.clone(),
                gsi1pk: Some(DUE_PARTITION.to_owned()),
                gsi1sk: Some(due_sort_key(now, &sk)),
                sk,
                kind: DELIVERY_KIND.to_owned(),
                event_id: event_id.clone(),
                event_type: event_type.clone(),
                endpoint,
                to,
                payload: payload.clone(),
                state: "pending".to_owned(),
                attempts: 0,
                due_at: now,
                since: since.unwrap_or(now),
                last_status: None,
                last_error: None,
                delivered_at: None,
                traceparent: traceparent.clone(),
            }
        });
        Some(deliveries.collect())
    }
}

/// The tenant of an outbox partition (`T#<tenant>#OUTBOX`).
pub fn tenant_of(pk: &str) -> Option<TenantId> {
    let tenant = pk.strip_prefix("T#")?.strip_suffix("#OUTBOX")?;
    TenantId::parse(tenant).ok()
}

/// The partition of `tenant`'s outbox.
pub fn outbox(tenant: &TenantId) -> String {
    format!("T#{tenant}#OUTBOX")
}

/// `tenant`'s most recent deliveries, newest event first (at most
/// `limit`; one `Query`).
pub async fn recent(table: &dyn Table, tenant: &TenantId, limit: i32) -> Result<Vec<Delivery>, ToolError> {
    let newest = Query {
        sk_prefix: Some("DLV#".to_owned()),
        newest_first: true,
        limit: Some(limit),
        ..Query::partition(outbox(tenant))
    };
    let page = table.query(&newest, "Nothing was read.").await?;
    Ok(page.items.into_iter().filter_map(from_attributes).collect())
}

/// Makes `tenant`'s dead delivery of `event_id` to `endpoint` due at
/// `now` again, with a new retry window. `Ok(false)`: there is no such
/// dead delivery (never was, or sent again already).
pub async fn send_again(
    table: &dyn Table,
    tenant: &TenantId,
    (event_id, endpoint): (&str, &str),
    now: DateTime<Utc>,
) -> Result<bool, ToolError> {
    let sk = format!("DLV#{event_id}#{endpoint}");
    let mut again = Update::of(TableKey {
        pk: outbox(tenant),
        sk: sk.clone(),
    });
    again.set = vec![
        ("state".to_owned(), Value::s("pending")),
        ("due_at".to_owned(), Value::n(now.timestamp())),
        ("since".to_owned(), Value::n(now.timestamp())),
        (DUE_INDEX.pk.to_owned(), Value::s(DUE_PARTITION)),
        (DUE_INDEX.sk.to_owned(), Value::S(due_sort_key(now.timestamp(), &sk))),
    ];
    again.condition = Some(Condition::Equals("state".to_owned(), Value::s("dead")));
    Ok(table
        .write(Write::Update(again), "Nothing was sent again.")
        .await?
        .is_ok())
}
