//! What an ERP backend answers when it cannot answer the operation: the
//! port's own errors (`draftline_erp::port` re-exports them). They state
//! facts (what failed, whether a write may have been applied, what the ERP
//! refused and why), never text for a model: [`ToolError::from`] alone
//! words them, so every backend's failure reads the same to an agent.

use crate::ToolError;

/// The cause of a failure, for the log only.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why a backend could not answer.
#[derive(Debug, thiserror::Error)]
pub enum ErpError {
    /// The store the backend keeps the ERP's data in (draftline's own
    /// table, for the built-in backend) did not answer, or refused the
    /// request for now (throttling). Nothing was written.
    #[error("the ERP data store is unavailable: {0}")]
    StoreUnavailable(#[source] Cause),
    /// The next document number could not be reserved (the store did not
    /// answer). No draft was created.
    #[error("no document number could be reserved: {0}")]
    NumberUnavailable(#[source] Cause),
    /// The ERP did not answer a read. Nothing was read or changed.
    #[error("the ERP is unavailable for a read: {0}")]
    Unreadable(#[source] Cause),
    /// A write to the ERP failed.
    #[error("a write to the ERP failed: {cause}")]
    WriteFailed {
        /// What failed, for the log.
        #[source]
        cause: Cause,
        /// Whether the write may have been applied before the failure (the
        /// ERP may hold the document); `false`: nothing was created.
        may_have_written: bool,
        /// When a retry may succeed.
        retry_after_seconds: u64,
    },
    /// No draft of that number in the caller's branch (another branch's
    /// reads exactly like a missing one).
    #[error("no draft {number} in the caller's branch")]
    NoSuchDraft {
        /// The number asked for.
        number: String,
    },
    /// The ERP refused the operation, for a reason of its own. Nothing was
    /// changed.
    #[error("the ERP refused: {0:?}")]
    Refused(Refusal),
    /// A bug of ours, or data in the ERP the backend cannot read.
    #[error("{0}")]
    Internal(#[source] Cause),
}

impl ErpError {
    /// A bug, or data the backend cannot read, with its cause for the log.
    pub fn internal(cause: impl Into<Cause>) -> Self {
        Self::Internal(cause.into())
    }

    /// Whether the failed operation may have written to the ERP (a create
    /// that got no answer): `false` means nothing was written.
    pub fn may_have_written(&self) -> bool {
        matches!(
            self,
            Self::WriteFailed {
                may_have_written: true,
                ..
            }
        )
    }
}

/// What an ERP refused on a decision about a draft, and the facts the
/// refusal is explained with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another decision was recorded first.
    AlreadyDecided {
        /// The document.
        number: String,
        /// The earlier decision, as a past participle: `approved`, `rejected`.
        verdict: &'static str,
        /// Who decided.
        by: String,
        /// When (RFC 3339).
        at: String,
    },
    /// The document is no longer a draft.
    NotADraft {
        /// The document.
        number: String,
        /// Its status code (`approved`, `sent`, …).
        status: String,
    },
    /// The draft was made by hand in the ERP, not through draftline, so it
    /// has no place in draftline's review queue.
    NotDraftedHere {
        /// The document.
        number: String,
    },
    /// This ERP decides on drafts in its own workflow, never on
    /// draftline's review pages.
    DecidedInErp {
        /// The document.
        number: String,
        /// The ERP's name (`Tryton`).
        erp: &'static str,
        /// How a person decides there (`Quote, Confirm or Cancel on the
        /// document there`).
        how: &'static str,
    },
}

/// The sentence a failed read or write of the built-in store ends on.
const NOTHING_CHANGED: &str = "Nothing was created or changed.";
/// The sentence a failed read of the ERP ends on.
const NOTHING_READ: &str = "Nothing was read or changed.";

impl From<ErpError> for ToolError {
    fn from(err: ErpError) -> Self {
        match err {
            ErpError::StoreUnavailable(cause) => ToolError::dependency(cause, NOTHING_CHANGED),
            ErpError::NumberUnavailable(cause) => ToolError::dependency(cause, "No draft was created."),
            ErpError::Unreadable(cause) => ToolError::erp_unreadable(cause, NOTHING_READ),
            ErpError::WriteFailed {
                cause,
                may_have_written,
                retry_after_seconds,
            } => ToolError::erp_unavailable(cause, may_have_written, retry_after_seconds),
            ErpError::NoSuchDraft { number } => {
                ToolError::NotFound(format!("No draft {number} in your branch. Nothing was decided."))
            }
            ErpError::Refused(refusal) => refusal.into(),
            ErpError::Internal(cause) => ToolError::Internal(cause),
        }
    }
}

impl From<Refusal> for ToolError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::AlreadyDecided {
                number,
                verdict,
                by,
                at,
            } => ToolError::invalid(
                "number",
                format!("{number} was already {verdict} by {by} at {at}. Nothing was changed."),
            ),
            Refusal::NotADraft { number, status } => ToolError::invalid(
                "number",
                format!(
                    "{number} is {status}, not a draft: only drafts are approved or rejected. Nothing was changed."
                ),
            ),
            Refusal::NotDraftedHere { number } => ToolError::invalid(
                "number",
                format!(
                    "{number} was not drafted through draftline, so it is not reviewed here: decide on it in the \
                     ERP. Nothing was changed."
                ),
            ),
            Refusal::DecidedInErp { number, erp, how } => ToolError::invalid(
                "number",
                format!(
                    "{number} is approved or rejected in {erp}'s own workflow ({how}), not on draftline's review \
                     pages. Nothing was recorded."
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_keeps_what_it_says_about_writes() {
        let store: ToolError = ErpError::StoreUnavailable("throttled".into()).into();
        assert!(store.retryable() && !store.may_have_written());
        assert!(store.public_message().contains(NOTHING_CHANGED));
        let read: ToolError = ErpError::Unreadable("timeout".into()).into();
        assert!(read.retryable() && !read.may_have_written());
        assert!(read.public_message().contains(NOTHING_READ));
        let lost: ToolError = ErpError::WriteFailed {
            cause: "no answer".into(),
            may_have_written: true,
            retry_after_seconds: 2,
        }
        .into();
        assert!(lost.may_have_written());
        assert_eq!(lost.retry_after_seconds(), Some(2));
        let bug: ToolError = ErpError::internal("a field of the wrong type").into();
        assert!(matches!(bug, ToolError::Internal(_)));
        assert!(!bug.public_message().contains("wrong type"));
    }

    #[test]
    fn a_refusal_names_the_document_and_says_nothing_changed() {
        let refused: ToolError = Refusal::AlreadyDecided {
            number: "PO-SBY-000001".into(),
            verdict: "approved",
            by: "approver-sby".into(),
            at: "2026-11-28T09:00:00Z".into(),
        }
        .into();
        assert_eq!(
            refused.public_message(),
            "PO-SBY-000001 was already approved by approver-sby at 2026-11-28T09:00:00Z. Nothing was changed."
        );
        let missing: ToolError = ErpError::NoSuchDraft {
            number: "QT-BDG-9".into(),
        }
        .into();
        assert!(matches!(missing, ToolError::NotFound(_)));
    }
}
