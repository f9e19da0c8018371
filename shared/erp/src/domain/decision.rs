//! A person's decision on a draft, as a document carries it: approved, or
//! rejected with a reason, by whom and when. Agents never decide; they
//! read the decision back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a person decided about a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Approved: the document moves on (a PO to `approved`, not yet sent).
    Approved,
    /// Rejected, with a reason: the document stays unsent for good.
    Rejected,
}

/// A person's decision on a draft, as the document carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Approved or rejected.
    pub verdict: Verdict,
    /// Why (required for a rejection; optional for an approval).
    pub reason: Option<String>,
    /// Who decided (the person's user id; never an agent).
    pub decided_by: String,
    /// When (RFC 3339, UTC).
    pub decided_at: String,
}

impl Verdict {
    /// The verdict as a past participle: `approved`, `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Rejected => "rejected",
        }
    }
}

impl Decision {
    /// What happens next after this decision on document `number`, for the
    /// model to tell the user (a rejection carries its reason).
    pub(crate) fn next_step(&self, number: &str, counterparty: &str, sent_to: &str) -> String {
        match self.verdict {
            Verdict::Approved => format!(
                "{number} was approved by {} at {}. A person {sent_to} {counterparty}; nothing has been sent yet. \
                 Do not draft it again.",
                self.decided_by, self.decided_at
            ),
            Verdict::Rejected => format!(
                "{number} was rejected by {} at {}: {} It will never be sent. Do not draft the same again \
                 without asking the person why.",
                self.decided_by,
                self.decided_at,
                self.reason.as_deref().unwrap_or("no reason given.")
            ),
        }
    }
}
