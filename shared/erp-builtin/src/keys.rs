//! Every DynamoDB key of the ERP data, in one place.
//!
//! All keys start with `T#<tenant>`; branch-owned data carries the branch in
//! the partition key, so no query can cross a branch by construction.

use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::DocumentKind;

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

/// Sort key of a vendor's prices for one item (every unit in one item).
pub fn prices_sk(item: &str) -> String {
    format!("PRICES#{item}")
}

/// Partition of a branch's stock and reorder policies, with a copy of the
/// item master record of every item it stocks.
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

/// Sort key of the copy of an item's master record in the stock partition
/// of a branch that stocks it (so one `Query` reads the item with its stock).
pub fn item_copy_sk(item: &str) -> String {
    format!("ITEM#{item}#ITEM")
}

/// Sort-key prefix of every record of `item` in a branch's stock partition:
/// its master copy, its policy and its warehouses.
pub fn stock_of_item(item: &str) -> String {
    format!("ITEM#{item}#")
}

/// Partition of a branch's documents of `kind` (`…#PO`, `…#QUOTE`).
pub fn documents(kind: DocumentKind, tenant: &TenantId, branch: &BranchId) -> String {
    let partition = match kind {
        DocumentKind::PurchaseOrder => "PO",
        DocumentKind::Quote => "QUOTE",
    };
    format!("T#{tenant}#B#{branch}#{partition}")
}

/// Sort key of one document of `kind` (`PO#<number>`, `QT#<number>`).
pub fn document_sk(kind: DocumentKind, number: &str) -> String {
    format!("{}#{number}", kind.prefix())
}

/// The number of the document of `kind` whose sort key is `sk`.
pub fn document_number(kind: DocumentKind, sk: &str) -> Option<String> {
    sk.strip_prefix(kind.prefix())?.strip_prefix('#').map(str::to_owned)
}

/// Partition of a branch's document number sequences.
pub fn sequences(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#SEQ")
}

/// Partition of the tenant's branches.
pub fn branches(tenant: &TenantId) -> String {
    format!("T#{tenant}#BRANCH")
}

/// Sort key just after every stock record of `item` (its master copy, its
/// policy and its warehouses), to continue a listing of a branch's stock
/// after that item. Codes are `A-Z 0-9 -`, all above `#`, and `~` sorts
/// above `ITEM`, `POLICY` and `WH#`.
pub fn stock_after_item(item: &str) -> String {
    format!("ITEM#{item}#~")
}

/// Partition of the vendors that supply a branch (one listing item per vendor).
pub fn branch_vendors(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#VENDOR")
}

/// Sort key of a vendor in a branch's vendor listing.
pub fn branch_vendor_sk(code: &str) -> String {
    format!("VENDOR#{code}")
}

/// Partition of a branch's customers (their profiles).
pub fn customers(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#CUSTOMER")
}

/// Sort key of a customer profile.
pub fn customer_sk(code: &str) -> String {
    format!("CUST#{code}")
}

/// Sort-key prefix of every document of one customer, in the sales-order
/// and receivables partitions.
pub fn customer_docs_prefix(customer: &str) -> String {
    format!("CUST#{customer}#")
}

/// Partition of a branch's sales orders.
pub fn sales_orders(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#SO")
}

/// Sort key of a sales order, under its customer.
pub fn sales_order_sk(customer: &str, number: &str) -> String {
    format!("CUST#{customer}#SO#{number}")
}

/// Partition of a branch's receivables (customer invoices).
pub fn receivables(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#AR")
}

/// Sort key of a customer invoice, under its customer.
pub fn invoice_sk(customer: &str, number: &str) -> String {
    format!("CUST#{customer}#INV#{number}")
}

/// Partition of a branch's payables (vendor bills).
pub fn payables(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#AP")
}

/// Sort key of a vendor bill, under its vendor.
pub fn bill_sk(vendor: &str, number: &str) -> String {
    format!("VEND#{vendor}#BILL#{number}")
}

/// Partition of the tenant's sales prices: one item per item code holding
/// its price on every list in every unit (so a quote reads its items'
/// prices by key before it knows the customer's list).
pub fn sales_prices(tenant: &TenantId) -> String {
    format!("T#{tenant}#SALESPRICE")
}

/// Partition of a branch's customers' credit standings (what each owes on
/// open orders and unpaid invoices), one item per customer.
pub fn standings(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#STANDING")
}

/// Partition of the tenant's tax types.
pub fn tax_types(tenant: &TenantId) -> String {
    format!("T#{tenant}#TAX")
}

/// Sort key of one tax type.
pub fn tax_type_sk(code: &str) -> String {
    format!("TAX#{code}")
}

/// Sort key of a review-queue entry: its draft's creation time, then its
/// number.
pub fn review_queue_sk(created_at: &str, number: &str) -> String {
    format!("{created_at}#{number}")
}

/// Partition of a branch's review queue: one item per agent draft.
pub fn review_queue(tenant: &TenantId, branch: &BranchId) -> String {
    format!("T#{tenant}#B#{branch}#REVIEW")
}

/// Partition of a branch's near-duplicate markers of `kind` (`PO`, `QT`)
/// for one counterparty: the one record of its open agent drafts (one
/// marker per item set).
pub fn near_duplicates(tenant: &TenantId, branch: &BranchId, kind: &str, counterparty: &str) -> String {
    format!("T#{tenant}#B#{branch}#NEAR#{kind}#{counterparty}")
}

/// Sort key of the marker of one item set (codes sorted, without repeats):
/// the codes themselves while they are short, else their SHA-256 (a sort
/// key holds at most 1024 bytes; 50 codes of 32 characters do not fit).
pub fn near_duplicate_sk(items: &[String]) -> String {
    let joined = items.join(",");
    if joined.len() <= 512 {
        format!("ITEMS#{joined}")
    } else {
        use sha2::Digest;
        format!("ITEMS#SHA256#{}", hex::encode(sha2::Sha256::digest(joined.as_bytes())))
    }
}
