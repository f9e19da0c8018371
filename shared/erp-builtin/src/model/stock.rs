//! How the domain's stock types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::*;

use super::BranchRecord;
use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

impl BranchRecord for StockLevel {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::stock(tenant, branch))),
            ("sk".to_owned(), sv(keys::stock_sk(&self.item, &self.warehouse))),
            ("kind".to_owned(), sv("stock")),
            ("item".to_owned(), sv(&self.item)),
            ("warehouse".to_owned(), sv(&self.warehouse)),
            ("on_hand".to_owned(), nv(self.on_hand)),
            ("reserved".to_owned(), nv(self.reserved)),
        ])
    }

    /// Reads a stock level.
    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "stock level";
        Ok(Self {
            item: attrs::s(item, what, "item")?,
            warehouse: attrs::s(item, what, "warehouse")?,
            on_hand: attrs::int(item, what, "on_hand")?,
            reserved: attrs::int(item, what, "reserved")?,
        })
    }
}

impl BranchRecord for ReorderPolicy {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::stock(tenant, branch))),
            ("sk".to_owned(), sv(keys::policy_sk(&self.item))),
            ("kind".to_owned(), sv("reorder_policy")),
            ("item".to_owned(), sv(&self.item)),
            ("reorder_point".to_owned(), nv(self.reorder_point)),
            ("reorder_qty".to_owned(), nv(self.reorder_qty)),
            ("preferred_vendor".to_owned(), sv(&self.preferred_vendor)),
        ])
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "reorder policy";
        Ok(Self {
            item: attrs::s(item, what, "item")?,
            reorder_point: attrs::int(item, what, "reorder_point")?,
            reorder_qty: attrs::int(item, what, "reorder_qty")?,
            preferred_vendor: attrs::s(item, what, "preferred_vendor")?,
        })
    }
}
