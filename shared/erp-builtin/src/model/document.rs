//! How a document of any kind is stored: as its kind's record says.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::{Document, DocumentKind, PurchaseOrder, Quote};

use super::attrs::Item as Attrs;
use super::{PurchaseOrderRecord, QuoteRecord};

/// How a [`Document`] is stored.
pub trait DocumentRecord: Sized {
    /// The key of document `number` of `kind` in `branch`.
    fn key(kind: DocumentKind, tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs;
    /// The item.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError>;
    /// Reads a document of `kind`.
    fn from_item(kind: DocumentKind, item: &Attrs) -> Result<Self, ErpError>;
}

impl DocumentRecord for Document {
    fn key(kind: DocumentKind, tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        match kind {
            DocumentKind::PurchaseOrder => PurchaseOrder::key(tenant, branch, number),
            DocumentKind::Quote => Quote::key(tenant, branch, number),
        }
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError> {
        match self {
            Self::PurchaseOrder(po) => po.to_item(tenant, branch),
            Self::Quote(quote) => quote.to_item(tenant, branch),
        }
    }

    fn from_item(kind: DocumentKind, item: &Attrs) -> Result<Self, ErpError> {
        Ok(match kind {
            DocumentKind::PurchaseOrder => Self::PurchaseOrder(PurchaseOrder::from_item(item)?),
            DocumentKind::Quote => Self::Quote(Quote::from_item(item)?),
        })
    }
}
