//! The near-duplicate marker: one item per branch, kind, counterparty and
//! item set, listing the open agent drafts of exactly those items, so the
//! near-duplicate check is one keyed read (in the key lookup's batch) and
//! not a query.
//!
//! Each open draft is one attribute of the marker, `d#<number>`, holding
//! the draft as JSON; `v` counts the drafts ever added. A draft is added
//! in its own transaction, on the condition that the marker is still as
//! the check read it ([`Seen`]): of two drafts of the same items placed at
//! once, the second's transaction fails, it is prepared again, and asks.
//! A person's decision removes its draft in the decision's own transaction.
//! Drafts older than a day are dropped by the next draft that reads them.

use aws_sdk_dynamodb::types::{TransactWriteItem, Update};
use chrono::SecondsFormat;
use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_dynamo::Db;
use draftline_erp::domain::{OpenDraft, OpenDrafts, Seen};
use draftline_erp::port::Window;

use super::attrs::{self, Item as Attrs, nv, sv};
use super::open_draft::OPEN_DRAFT_SECONDS;
use crate::keys;

/// The prefix of a draft's attribute in a marker.
const ENTRY: &str = "d#";

/// The item kind of a marker.
pub const KIND: &str = "near_duplicate";

/// Where the open drafts of one item set are marked.
#[derive(Debug, Clone, Copy)]
pub struct Marker<'a> {
    /// The tenant.
    pub tenant: &'a TenantId,
    /// The branch.
    pub branch: &'a BranchId,
    /// `PO` or `QT`.
    pub kind: &'a str,
    /// The vendor's or customer's code.
    pub counterparty: &'a str,
    /// The item codes, sorted and without repeats.
    pub items: &'a [String],
}

impl Marker<'_> {
    /// The marker's key.
    pub fn key(&self) -> Attrs {
        Attrs::from([
            (
                "pk".to_owned(),
                sv(keys::near_duplicates(
                    self.tenant,
                    self.branch,
                    self.kind,
                    self.counterparty,
                )),
            ),
            ("sk".to_owned(), sv(keys::near_duplicate_sk(self.items))),
        ])
    }

    /// The open drafts `stored` lists that were drafted within `window`,
    /// and what the marker was read as (absent, or its version and the
    /// drafts past any window, which the next write drops).
    pub fn read(stored: Option<&Attrs>, window: &Window) -> Result<OpenDrafts, ErpError> {
        let Some(stored) = stored else {
            return Ok(OpenDrafts {
                drafts: Vec::new(),
                seen: Seen::Absent,
            });
        };
        let version = u64::try_from(attrs::int(stored, "near-duplicate marker", "v")?)
            .map_err(|_| attrs::corrupt("near-duplicate marker", "v"))?;
        let since = window.since.to_rfc3339_opts(SecondsFormat::Millis, true);
        let forgotten = window
            .now
            .checked_sub_signed(chrono::Duration::seconds(OPEN_DRAFT_SECONDS))
            .unwrap_or(window.now)
            .to_rfc3339_opts(SecondsFormat::Millis, true);
        let mut drafts = Vec::new();
        let mut stale = Vec::new();
        for (name, value) in stored {
            let Some(number) = name.strip_prefix(ENTRY) else {
                continue;
            };
            let text = value
                .as_s()
                .map_err(|_| attrs::corrupt("near-duplicate marker", name))?;
            let draft: OpenDraft = serde_json::from_str(text).map_err(ErpError::internal)?;
            if draft.created_at < forgotten {
                stale.push(number.to_owned());
            } else if draft.created_at >= since {
                drafts.push(draft);
            }
        }
        Ok(OpenDrafts {
            drafts,
            seen: Seen::Version { version, stale },
        })
    }

    /// The write that adds `draft` to the marker, if it is still as
    /// `seen` says (unconditionally when it was not read), dropping the
    /// stale drafts that read found.
    pub fn add(&self, db: &Db, draft: &OpenDraft, seen: &Seen) -> Result<TransactWriteItem, ErpError> {
        let entry = serde_json::to_string(draft).map_err(ErpError::internal)?;
        let mut update = Update::builder()
            .table_name(db.table())
            .set_key(Some(self.key()))
            .expression_attribute_names("#e", format!("{ENTRY}{}", draft.number))
            .expression_attribute_names("#v", "v")
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_values(":e", sv(entry))
            .expression_attribute_values(":one", nv(1))
            .expression_attribute_values(":kind", sv(KIND));
        let mut expression = "SET #e = :e, #kind = :kind ADD #v :one".to_owned();
        match seen {
            Seen::Unread => {}
            Seen::Absent => update = update.condition_expression("attribute_not_exists(pk)"),
            Seen::Version { version, stale } => {
                update = update
                    .condition_expression("#v = :seen")
                    .expression_attribute_values(":seen", nv(version));
                let mut dropped = Vec::new();
                for (i, number) in stale.iter().enumerate() {
                    let name = format!("#s{i}");
                    update = update.expression_attribute_names(name.clone(), format!("{ENTRY}{number}"));
                    dropped.push(name);
                }
                if !dropped.is_empty() {
                    expression.push_str(" REMOVE ");
                    expression.push_str(&dropped.join(", "));
                }
            }
        }
        let update = update
            .update_expression(expression)
            .build()
            .map_err(ErpError::internal)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The write that removes draft `number` from the marker (a person
    /// decided on it). A marker that does not exist yet is left an empty one.
    pub fn remove(&self, db: &Db, number: &str) -> Result<TransactWriteItem, ErpError> {
        let update = Update::builder()
            .table_name(db.table())
            .set_key(Some(self.key()))
            .update_expression("SET #kind = :kind REMOVE #e")
            .expression_attribute_names("#e", format!("{ENTRY}{number}"))
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_values(":kind", sv(KIND))
            .build()
            .map_err(ErpError::internal)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
