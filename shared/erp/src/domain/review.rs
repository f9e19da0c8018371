//! The people's side of a draft: the queue of agent drafts a reviewer sees,
//! and the decision a person records on one (approve, or reject with a
//! reason). Agents never decide; they read the decision back.

use chrono::{DateTime, Utc};
use draftline_contract::tool::{CounterpartyKind, Created, DocumentRef, review_url};
use draftline_contract::{ErpError, Refusal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::decision::{Decision, Verdict};
use super::open_draft::{OpenDraft, OpenLine};
use super::po::{DocumentStatus, PoDraft, PoStatus, PurchaseOrder};
use super::quote::{Quote, QuoteDraft};
use crate::money::Money;

/// What kind of document a draft is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    /// A purchase order (`PO-…`).
    PurchaseOrder,
    /// A sales quote (`QT-…`).
    Quote,
}

impl DocumentKind {
    /// The kind as stored and shown (`purchase_order`, `quote`).
    pub fn code(self) -> &'static str {
        match self {
            Self::PurchaseOrder => "purchase_order",
            Self::Quote => "quote",
        }
    }

    /// What it is called in a sentence (`purchase order`, `quote`).
    pub fn noun(self) -> &'static str {
        match self {
            Self::PurchaseOrder => "purchase order",
            Self::Quote => "quote",
        }
    }

    /// Who its counterparty is, as a tenant's policy weighs it.
    pub fn counterparty(self) -> CounterpartyKind {
        match self {
            Self::PurchaseOrder => CounterpartyKind::Vendor,
            Self::Quote => CounterpartyKind::Customer,
        }
    }

    /// The prefix of its numbers and number series (`PO`, `QT`).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::PurchaseOrder => "PO",
            Self::Quote => "QT",
        }
    }

    /// The prefix of its ids (`po`, `qt`).
    pub fn id_prefix(self) -> &'static str {
        match self {
            Self::PurchaseOrder => "po",
            Self::Quote => "qt",
        }
    }

    /// The kind of document `number` is, by its prefix.
    pub fn of_number(number: &str) -> Option<Self> {
        [Self::PurchaseOrder, Self::Quote].into_iter().find(|kind| {
            number
                .strip_prefix(kind.prefix())
                .is_some_and(|rest| rest.starts_with('-'))
        })
    }
}

/// A decision about to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDecision {
    /// The decision.
    pub decision: Decision,
    /// Unique per decision form shown: a double click sends it twice and is
    /// one decision.
    pub decision_id: String,
}

impl NewDecision {
    /// The rules of recording this decision on draft `number`, whose status
    /// is `status` and which carries `on_document`, recorded under
    /// `recorded_id`: the decision already there if it is this very one (a
    /// double click sends a form twice), `None` if nothing stands in the
    /// way, else why the ERP refuses it (another decision came first, or
    /// the document is not a draft any more). Every backend applies these.
    pub fn against(
        &self,
        number: &str,
        status: &str,
        on_document: Option<&Decision>,
        recorded_id: Option<&str>,
    ) -> Result<Option<Decision>, ErpError> {
        match (on_document, recorded_id) {
            (Some(earlier), Some(id)) if id == self.decision_id => return Ok(Some(earlier.clone())),
            (Some(earlier), _) => {
                return Err(ErpError::Refused(Refusal::AlreadyDecided {
                    number: number.to_owned(),
                    verdict: earlier.verdict.as_str(),
                    by: earlier.decided_by.clone(),
                    at: earlier.decided_at.clone(),
                }));
            }
            (None, _) => {}
        }
        if status == "draft" {
            Ok(None)
        } else {
            Err(ErpError::Refused(Refusal::NotADraft {
                number: number.to_owned(),
                status: status.to_owned(),
            }))
        }
    }
}

/// One agent draft in a reviewer's queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentDraft {
    /// Purchase order or quote.
    pub kind: DocumentKind,
    /// Its number.
    pub number: String,
    /// Its id (for the audit trail).
    pub id: String,
    /// Its status (`draft`, `approved`, `rejected`, …).
    pub status: String,
    /// The vendor's or customer's code.
    pub counterparty_code: String,
    /// The vendor's or customer's name.
    pub counterparty_name: String,
    /// Its total.
    pub total: Money,
    /// The person the agent acted for.
    pub drafted_on_behalf_of: String,
    /// The agent run, if any.
    pub drafted_by_agent_run: Option<String>,
    /// When it was drafted (RFC 3339, UTC).
    pub created_at: String,
    /// The decision, once a person made one.
    pub decision: Option<Decision>,
}

/// An agent draft a person decided in the ERP's own workflow, as the ERP
/// tells it when asked ([`crate::port::Review::decided_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecidedDraft {
    /// The branch it is of.
    pub branch: String,
    /// When the ERP last changed it (the decision, unless edited since).
    pub changed_at: DateTime<Utc>,
    /// The draft, with its decision.
    pub draft: AgentDraft,
}

/// Which drafts a queue shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DraftFilter {
    /// Only this kind.
    pub kind: Option<DocumentKind>,
    /// Only this status (`draft`, `approved`, `rejected`).
    pub status: Option<String>,
}

/// A document kind an agent drafts and a person reviews on its own page:
/// the one idea of a kind that the draft engine, the review pages and every
/// backend share (its number series and ids by [`DocumentKind`]).
pub trait Reviewable: Sized {
    /// The kind of document.
    const KIND: DocumentKind;
    /// The checked draft it is made from.
    type Draft;

    /// The document `draft` becomes once the ERP gave it `id`, `number`
    /// and its creation time (RFC 3339, UTC).
    fn numbered(draft: &Self::Draft, id: String, number: String, created_at: String) -> Self;

    /// Its id, number and creation time (RFC 3339).
    fn identity(&self) -> (&str, &str, &str);

    /// Its status as stored and shown (`draft`, `approved`, …).
    fn status(&self) -> &'static str;

    /// A person's decision on it, once there is one.
    fn decision(&self) -> Option<&Decision>;

    /// It after a person's `decision`.
    fn decided(self, decision: Decision) -> Self;

    /// Its counterparty's code (vendor or customer).
    fn counterparty(&self) -> &str;

    /// It as the near-duplicate check compares it.
    fn open_draft(&self) -> OpenDraft;

    /// Its entry in the review queue.
    fn queue_entry(&self) -> AgentDraft;

    /// Where its page sets the link to itself.
    fn review_url_mut(&mut self) -> &mut Option<String>;

    /// This document with `review_url` set to its page under `review_pages`
    /// (`https://host/review`).
    fn with_review_url(mut self, review_pages: &str) -> Self {
        let url = review_url(review_pages, self.identity().1);
        *self.review_url_mut() = Some(url);
        self
    }

    /// The document's id, number and kind, as the key record and the
    /// audit item name it.
    fn document_ref(&self) -> DocumentRef {
        let (id, number, _) = self.identity();
        DocumentRef {
            id: id.to_owned(),
            number: number.to_owned(),
            kind: Self::KIND.code().to_owned(),
        }
    }

    /// The document as its draft's transaction or the ERP created it.
    fn created(&self) -> Created {
        Created {
            document: self.document_ref(),
            created_at: self.identity().2.to_owned(),
        }
    }
}

/// A kind's [`Reviewable`]: its draft, status and counterparty fields. A
/// person's decision approves or rejects it (next: a person sends it to
/// the counterparty, or it is never sent).
macro_rules! reviewable {
    ($document:ty, $kind:ident, $draft:ty, $status:ident, $id:ident, $number:ident, $counterparty:ident) => {
        impl Reviewable for $document {
            const KIND: DocumentKind = DocumentKind::$kind;
            type Draft = $draft;

            fn numbered(draft: &$draft, id: String, number: String, created_at: String) -> Self {
                draft.numbered(id, number, created_at)
            }

            fn identity(&self) -> (&str, &str, &str) {
                (&self.$id, &self.$number, &self.created_at)
            }

            fn status(&self) -> &'static str {
                self.status.code()
            }

            fn decision(&self) -> Option<&Decision> {
                self.decision.as_ref()
            }

            fn decided(mut self, decision: Decision) -> Self {
                self.status = match decision.verdict {
                    Verdict::Approved => $status::Approved,
                    Verdict::Rejected => $status::Rejected,
                };
                self.next_step = decision.next_step(&self.$number, &self.$counterparty.name, "sends it to");
                self.decision = Some(decision);
                self
            }

            fn counterparty(&self) -> &str {
                &self.$counterparty.code
            }

            fn open_draft(&self) -> OpenDraft {
                OpenDraft {
                    number: self.$number.clone(),
                    counterparty: self.$counterparty.code.clone(),
                    lines: self
                        .lines
                        .iter()
                        .map(|l| OpenLine {
                            item_code: l.item_code.clone(),
                            qty: l.qty,
                            uom: l.uom,
                        })
                        .collect(),
                    agent_run: self.drafted_by_agent_run.clone(),
                    created_at: self.created_at.clone(),
                    key: None,
                }
            }

            fn queue_entry(&self) -> AgentDraft {
                AgentDraft {
                    kind: Self::KIND,
                    number: self.$number.clone(),
                    id: self.$id.clone(),
                    status: self.status.code().to_owned(),
                    counterparty_code: self.$counterparty.code.clone(),
                    counterparty_name: self.$counterparty.name.clone(),
                    total: self.total.clone(),
                    drafted_on_behalf_of: self.drafted_on_behalf_of.clone(),
                    drafted_by_agent_run: self.drafted_by_agent_run.clone(),
                    created_at: self.created_at.clone(),
                    decision: self.decision.clone(),
                }
            }

            fn review_url_mut(&mut self) -> &mut Option<String> {
                &mut self.review_url
            }
        }
    };
}

reviewable!(
    PurchaseOrder,
    PurchaseOrder,
    PoDraft,
    PoStatus,
    draft_id,
    po_number,
    vendor
);
reviewable!(
    Quote,
    Quote,
    QuoteDraft,
    DocumentStatus,
    quote_id,
    quote_number,
    customer
);
