//! Open agent drafts, as the near-duplicate check sees them: what a draft
//! of the last day drafts, so a new call that asks for the same thing again
//! (an agent run restarted under a new run id) can be put to a person.

use draftline_contract::store::Value;
use serde::{Deserialize, Serialize};

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

/// The open drafts a near-duplicate check compares a new draft with, and
/// what the backend read them as: a draft placed after this read is
/// written only while that still holds ([`Seen`]), so of two drafts of the
/// same items placed at once, one is created and the other asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenDrafts {
    /// The open drafts, in no particular order.
    pub drafts: Vec<OpenDraft>,
    /// What they were read as.
    pub seen: Seen,
}

impl From<Vec<OpenDraft>> for OpenDrafts {
    /// Drafts read from a backend that keeps no record to hold a new draft to.
    fn from(drafts: Vec<OpenDraft>) -> Self {
        Self {
            drafts,
            seen: Seen::Unread,
        }
    }
}

/// The state of the record a backend keeps of a branch's open drafts of one
/// counterparty and item set (the built-in backend's near-duplicate
/// marker), as the near-duplicate check read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Seen {
    /// Not read: the near-duplicate check is off (the new draft is not
    /// recorded), or the backend keeps no such record.
    #[default]
    Unread,
    /// Read, and there was none: the new draft is recorded only if there
    /// still is none.
    Absent,
    /// Read at `version`: the new draft is recorded only if it is still at
    /// it. `stale` are the numbers of drafts it lists that are past any
    /// window (the record may drop them).
    Version {
        /// The version read.
        version: u64,
        /// Drafts too old to ask about, or whose entry could not be read.
        stale: Vec<String>,
    },
    /// Read, and it could not be (no valid version): it is treated as
    /// absent, and the new draft's record replaces it, if it is still as
    /// read. A record that does not parse must not refuse every later
    /// draft of the same items.
    Unreadable {
        /// The version as stored (`None`: there was none; `Null`: a value
        /// of a type no write carries): the replacement's condition.
        version: Option<Value>,
        /// The drafts it lists (readable or not), which the replacement
        /// drops.
        listed: Vec<String>,
    },
}

impl OpenDraft {
    /// The item codes it drafts, sorted and without repeats (what the
    /// near-duplicate check compares).
    pub fn item_set(&self) -> Vec<String> {
        let codes: std::collections::BTreeSet<&str> = self.lines.iter().map(|l| l.item_code.as_str()).collect();
        codes.into_iter().map(str::to_owned).collect()
    }
}
