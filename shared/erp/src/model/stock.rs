//! Stock per warehouse and reorder policies, per branch.

use draftline_contract::ToolError;
use draftline_contract::identity::{BranchId, TenantId};

use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

/// Stock of one item in one warehouse of a branch, in the item's base unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockLevel {
    /// The item.
    pub item: String,
    /// The warehouse (`SBY-WH1`).
    pub warehouse: String,
    /// Physically there.
    pub on_hand: i64,
    /// Promised to open sales orders.
    pub reserved: i64,
}

/// When and how much to reorder an item in a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReorderPolicy {
    /// The item.
    pub item: String,
    /// Reorder when available stock is at or below this (base units).
    pub reorder_point: i64,
    /// The usual order quantity (base units).
    pub reorder_qty: i64,
    /// The vendor to order from by default.
    pub preferred_vendor: String,
}

impl StockLevel {
    /// On hand minus reserved. Both are bounded where they are read
    /// ([`attrs::MAX_STORED_INT`]), so the difference always fits; it
    /// saturates rather than panic if that ever changed.
    pub fn available(&self) -> i64 {
        self.on_hand.saturating_sub(self.reserved)
    }

    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
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
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "stock level";
        Ok(Self {
            item: attrs::s(item, what, "item")?,
            warehouse: attrs::s(item, what, "warehouse")?,
            on_hand: attrs::int(item, what, "on_hand")?,
            reserved: attrs::int(item, what, "reserved")?,
        })
    }
}

impl ReorderPolicy {
    /// The item.
    pub fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
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

    /// Reads a policy.
    pub fn from_item(item: &Attrs) -> Result<Self, ToolError> {
        let what = "reorder policy";
        Ok(Self {
            item: attrs::s(item, what, "item")?,
            reorder_point: attrs::int(item, what, "reorder_point")?,
            reorder_qty: attrs::int(item, what, "reorder_qty")?,
            preferred_vendor: attrs::s(item, what, "preferred_vendor")?,
        })
    }
}
