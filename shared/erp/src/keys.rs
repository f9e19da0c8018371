//! Every DynamoDB key of the ERP data, in one place.
//!
//! All keys start with `T#<tenant>`; branch-owned data carries the branch in
//! the partition key, so no query can cross a branch by construction.

use draftline_contract::identity::{BranchId, TenantId};

/// Partition of the tenant's item master.
pub fn items(tenant: &TenantId) -> String {
    format!("T#{tenant}#ITEM")
}

/// Sort key of one item in the item master.
pub fn item_sk(code: &str) -> String {
    format!("ITEM#{code}")
}

/// Partition of one vendor: its profile and its price list.
pub fn vendor(tenant: &TenantId, code: &str) -> String {
    format!("T#{tenant}#VENDOR#{code}")
}

/// Sort key of a vendor's profile.
pub const VENDOR_PROFILE_SK: &str = "PROFILE";

/// Sort key of one price-list entry.
pub fn price_sk(item: &str, uom: &str) -> String {
    format!("PRICE#{item}#{uom}")
}

/// Partition of a branch's stock and reorder policies.
pub fn stock(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#STOCK")
}

/// Sort key of an item's stock in one warehouse.
pub fn stock_sk(item: &str, warehouse: &str) -> String {
    format!("ITEM#{item}#WH#{warehouse}")
}

/// Sort key of an item's reorder policy in a branch.
pub fn policy_sk(item: &str) -> String {
    format!("ITEM#{item}#POLICY")
}

/// Partition of a branch's purchase orders.
pub fn purchase_orders(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#PO")
}

/// Sort key of one purchase order.
pub fn po_sk(number: &str) -> String {
    format!("PO#{number}")
}

/// Partition of a branch's document number sequences.
pub fn sequences(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#SEQ")
}

/// Partition of the tenant's branches.
pub fn branches(tenant: &TenantId) -> String {
    format!("T#{tenant}#BRANCH")
}
