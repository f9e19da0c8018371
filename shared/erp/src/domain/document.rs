//! A draft of any kind before the ERP numbers it, and a document of any
//! kind after: what the port's draft operations
//! ([`Drafting`](crate::port::Drafting)) take and hand back, one variant
//! per kind.

use draftline_contract::ErpError;
use draftline_contract::tool::DocumentRef;

use super::decision::Decision;
use super::open_draft::OpenDraft;
use super::po::{PoDraft, PurchaseOrder};
use super::quote::{Quote, QuoteDraft};
use super::review::{AgentDraft, DocumentKind, Reviewable};

/// A checked draft of any kind, before the ERP numbers it: what the port's
/// [`place_draft`](crate::port::Drafting::place_draft) takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewDraft {
    /// A purchase order.
    PurchaseOrder(PoDraft),
    /// A quote.
    Quote(QuoteDraft),
}

/// A numbered document of any kind: what the port's
/// [`place_draft`](crate::port::Drafting::place_draft) hands back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// A purchase order.
    PurchaseOrder(PurchaseOrder),
    /// A quote.
    Quote(Quote),
}

/// Both enums of one variant per kind, to and from the kind's own types.
macro_rules! per_kind {
    ($($kind:ident: $draft:ty => $document:ty),+) => {
        $(
            impl From<$draft> for NewDraft {
                fn from(draft: $draft) -> Self {
                    Self::$kind(draft)
                }
            }
            impl From<$document> for Document {
                fn from(document: $document) -> Self {
                    Self::$kind(document)
                }
            }
            impl TryFrom<Document> for $document {
                type Error = ErpError;
                fn try_from(document: Document) -> Result<Self, ErpError> {
                    match document {
                        Document::$kind(document) => Ok(document),
                        other => Err(ErpError::internal(format!(
                            "a {} placed for a {} draft",
                            other.kind().code(),
                            DocumentKind::$kind.code()
                        ))),
                    }
                }
            }
        )+
        impl NewDraft {
            /// Its kind.
            pub fn kind(&self) -> DocumentKind {
                match self {
                    $(Self::$kind(_) => DocumentKind::$kind,)+
                }
            }
            /// The document it becomes once the ERP gave it `id`, `number`
            /// and its creation time (RFC 3339, UTC).
            pub fn numbered(&self, id: String, number: String, created_at: String) -> Document {
                match self {
                    $(Self::$kind(draft) => Document::$kind(<$document>::numbered(draft, id, number, created_at)),)+
                }
            }
        }
        impl Document {
            /// Its kind.
            pub fn kind(&self) -> DocumentKind {
                match self {
                    $(Self::$kind(_) => DocumentKind::$kind,)+
                }
            }
            /// Its status as stored and shown.
            pub fn status(&self) -> &'static str {
                match self {
                    $(Self::$kind(document) => document.status(),)+
                }
            }
            /// A person's decision on it, once there is one.
            pub fn decision(&self) -> Option<&Decision> {
                match self {
                    $(Self::$kind(document) => document.decision(),)+
                }
            }
            /// It after a person's `decision`.
            pub fn decided(self, decision: Decision) -> Self {
                match self {
                    $(Self::$kind(document) => Self::$kind(Reviewable::decided(document, decision)),)+
                }
            }
            /// Its id, number and kind, as the key record and the audit item name it.
            pub fn document_ref(&self) -> DocumentRef {
                match self {
                    $(Self::$kind(document) => document.document_ref(),)+
                }
            }
            /// It as the near-duplicate check compares it.
            pub fn open_draft(&self) -> OpenDraft {
                match self {
                    $(Self::$kind(document) => document.open_draft(),)+
                }
            }
            /// Its entry in the review queue.
            pub fn queue_entry(&self) -> AgentDraft {
                match self {
                    $(Self::$kind(document) => document.queue_entry(),)+
                }
            }
        }
    };
}

per_kind!(PurchaseOrder: PoDraft => PurchaseOrder, Quote: QuoteDraft => Quote);
