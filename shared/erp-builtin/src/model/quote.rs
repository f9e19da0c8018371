//! How the domain's quote types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_contract::store::Value;
use draftline_erp::domain::*;

use super::attrs::{self, Item as Attrs, sv};
use crate::keys;

/// How a [`Quote`] is stored.
pub trait QuoteRecord: Sized {
    /// The key of quote `number` in `branch`.
    fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs;
    /// The item: queryable attributes plus the document as JSON.
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError>;
    /// Reads a quote.
    fn from_item(item: &Attrs) -> Result<Self, ErpError>;
}

impl QuoteRecord for Quote {
    fn key(tenant: &TenantId, branch: &BranchId, number: &str) -> Attrs {
        attrs::key(keys::quotes(tenant, branch), keys::quote_sk(number))
    }

    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Result<Attrs, ErpError> {
        let mut item = Self::key(tenant, branch, &self.quote_number);
        item.extend([
            ("kind".to_owned(), sv("quote")),
            ("quote_id".to_owned(), sv(&self.quote_id)),
            ("quote_number".to_owned(), sv(&self.quote_number)),
            ("status".to_owned(), sv(self.status.code())),
            ("customer_code".to_owned(), sv(&self.customer.code)),
            ("created_at".to_owned(), sv(&self.created_at)),
            ("total".to_owned(), Value::N(self.total.amount.clone())),
            ("drafted_on_behalf_of".to_owned(), sv(&self.drafted_on_behalf_of)),
            (
                "document".to_owned(),
                sv(serde_json::to_string(self).map_err(ErpError::internal)?),
            ),
        ]);
        if let Some(run) = &self.drafted_by_agent_run {
            item.insert("drafted_by_agent_run".into(), sv(run));
        }
        Ok(item)
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let text = attrs::s(item, "quote", "document")?;
        serde_json::from_str(&text).map_err(ErpError::internal)
    }
}
