//! Open agent drafts, as the near-duplicate check sees them: what a draft
//! of the last day drafts, so a new call that asks for the same thing again
//! (an agent run restarted under a new run id) can be put to a person.

use serde::{Deserialize, Serialize};

use super::po::PurchaseOrder;
use super::quote::Quote;
use crate::units::Uom;

/// One line of an open draft: how much of which item in which unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenLine {
    /// Item code.
    pub item_code: String,
    /// Quantity in `uom`.
    pub qty: i64,
    /// The unit.
    pub uom: Uom,
}

/// A draft still waiting for review, drafted through draftline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenDraft {
    /// Its number (`PO-SBY-000031`).
    pub number: String,
    /// The vendor's or customer's code.
    pub counterparty: String,
    /// Its lines.
    pub lines: Vec<OpenLine>,
    /// The agent run that drafted it, if any.
    pub agent_run: Option<String>,
    /// When it was drafted (RFC 3339, UTC).
    pub created_at: String,
    /// The key it was drafted under, where the ERP keeps it (`draftline_key`):
    /// a draft of the very call being made (a worker that died after the ERP
    /// write) is not a duplicate of itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl OpenDraft {
    /// Whether a new draft of `items` (codes) for the same counterparty
    /// asks for the same items as this one.
    pub fn same_items<'a>(&self, items: impl IntoIterator<Item = &'a str>) -> bool {
        let mine: std::collections::BTreeSet<&str> = self.lines.iter().map(|l| l.item_code.as_str()).collect();
        let theirs: std::collections::BTreeSet<&str> = items.into_iter().collect();
        !mine.is_empty() && mine == theirs
    }

    /// `10 BOX of BRG-0042 and 30 PCS of BRG-0043`.
    pub fn describe_lines(&self) -> String {
        let lines: Vec<String> = self
            .lines
            .iter()
            .map(|l| format!("{} {} of {}", l.qty, l.uom, l.item_code))
            .collect();
        match lines.as_slice() {
            [] => "nothing".to_owned(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    }
}

impl From<&PurchaseOrder> for OpenDraft {
    /// The open draft a PO is while nobody decided on it (its key is the
    /// ERP's to fill in, where it keeps one).
    fn from(po: &PurchaseOrder) -> Self {
        Self {
            number: po.po_number.clone(),
            counterparty: po.vendor.code.clone(),
            lines: po
                .lines
                .iter()
                .map(|l| OpenLine {
                    item_code: l.item_code.clone(),
                    qty: l.qty,
                    uom: l.uom,
                })
                .collect(),
            agent_run: po.drafted_by_agent_run.clone(),
            created_at: po.created_at.clone(),
            key: None,
        }
    }
}

impl From<&Quote> for OpenDraft {
    /// The open draft a quote is while nobody decided on it.
    fn from(quote: &Quote) -> Self {
        Self {
            number: quote.quote_number.clone(),
            counterparty: quote.customer.code.clone(),
            lines: quote
                .lines
                .iter()
                .map(|l| OpenLine {
                    item_code: l.item_code.clone(),
                    qty: l.qty,
                    uom: l.uom,
                })
                .collect(),
            agent_run: quote.drafted_by_agent_run.clone(),
            created_at: quote.created_at.clone(),
            key: None,
        }
    }
}
