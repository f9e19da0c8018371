//! The ERP port: every operation the tools need, as traits over domain
//! types. A backend (`draftline-erp-builtin`, `draftline-erp-tryton`, the
//! next one) implements [`Erp`] and nothing else; the tools are written
//! against it only. Drafts of every kind go through the four operations of
//! [`Drafting`], the kind a value. No DynamoDB SDK or ERP type crosses it: a built-in
//! draft's writes and a decision travel as a store-neutral [`WriteSet`], an
//! external draft as an [`ExternalDocument`].
//!
//! Every operation takes the caller's [`Scope`] and must answer for that
//! tenant and branch only: another branch's document reads exactly like a
//! missing one, whatever the backend's credentials could see.
//!
//! A backend fails with an [`ErpError`]: what failed and whether a write may
//! have been applied, never text for a model. The tools turn it into the
//! model-facing `ToolError` (one `From`), so every backend reads the same.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use draftline_contract::identity::{BranchCode, BranchId, Caller, TenantId};
use draftline_contract::store::{Found, TableKey, WriteSet};
use draftline_contract::tool::DocumentRef;
/// How a placed draft becomes a document, and a document in the ERP: the
/// contract's own types, one for the port and the tools alike.
pub use draftline_contract::tool::{ExternalDocument, Placement};
/// What a backend answers when it cannot answer: facts, worded for a model
/// by the tool layer alone (`ToolError::from`).
pub use draftline_contract::{ErpError, Refusal};

use crate::domain::{
    AgentDraft, BranchVendor, CreditStanding, Customer, CustomerInvoice, DecidedDraft, Decision, Document,
    DocumentKind, DraftFilter, Item, ListPrice, NewDecision, NewDraft, OpenDraft, OpenDrafts, PoStatus, PriceEntry,
    PurchaseOrder, Quote, ReorderPolicy, SalesOrder, Seen, StockLevel, TaxType, Vendor, VendorBill,
};
use crate::units::Uom;

/// Whose data an operation may touch: the verified caller's tenant and branch.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The tenant (one ERP company).
    pub tenant: &'a TenantId,
    /// The branch (one warehouse of it).
    pub branch: &'a BranchId,
    /// The branch's code as printed on documents.
    pub branch_code: &'a BranchCode,
}

impl<'a> Scope<'a> {
    /// The scope of `caller`.
    pub fn of(caller: &'a Caller) -> Self {
        Self {
            tenant: caller.tenant(),
            branch: caller.branch(),
            branch_code: caller.branch_code(),
        }
    }
}

/// An item of a branch at or below its reorder point: its policy and its
/// stock in every warehouse of the branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueItem {
    /// The reorder policy.
    pub policy: ReorderPolicy,
    /// Stock per warehouse (may be empty: nothing in stock anywhere).
    pub levels: Vec<StockLevel>,
}

impl DueItem {
    /// On hand, all warehouses (stored quantities are bounded, so the sum fits).
    pub fn on_hand(&self) -> i64 {
        self.levels.iter().fold(0i64, |sum, l| sum.saturating_add(l.on_hand))
    }
    /// Reserved, all warehouses.
    pub fn reserved(&self) -> i64 {
        self.levels.iter().fold(0i64, |sum, l| sum.saturating_add(l.reserved))
    }
    /// Available, all warehouses.
    pub fn available(&self) -> i64 {
        self.levels
            .iter()
            .fold(0i64, |sum, l| sum.saturating_add(l.available()))
    }
}

/// One item of the item master with its stock in the caller's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemStock {
    /// The item.
    pub item: Item,
    /// Stock per warehouse of the branch (empty where the branch holds none).
    pub levels: Vec<StockLevel>,
    /// The branch's reorder policy for the item, if it has one.
    pub policy: Option<ReorderPolicy>,
}

/// A page of a listing and whether more follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The results, at most the page size.
    pub items: Vec<T>,
    /// The position after the last result when more may follow (for the cursor).
    pub next_after: Option<String>,
}

impl<T> Default for Page<T> {
    /// An empty page, the last.
    fn default() -> Self {
        Self {
            items: Vec::new(),
            next_after: None,
        }
    }
}

impl<T> Page<T> {
    /// The first `want` of `items`, which were fetched one beyond `want`
    /// (so more follow exactly when there are more than `want`); then
    /// `next_after` is the `position` of the last one kept.
    pub fn first(mut items: Vec<T>, want: usize, position: impl Fn(&T) -> String) -> Self {
        let more = items.len() > want;
        items.truncate(want);
        let next_after = if more { items.last().map(position) } else { None };
        Self { items, next_after }
    }

    /// The same page of `convert`ed results.
    pub fn map<U>(self, convert: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(convert).collect(),
            next_after: self.next_after,
        }
    }
}

/// What a draft reads about: its counterparty (vendor or customer) and the
/// items of its lines.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The vendor's or customer's code.
    pub counterparty: &'a str,
    /// The item codes of the lines, sorted and without repeats.
    pub items: &'a [String],
    /// Whether the near-duplicate check is on for this call (a window is
    /// set): a backend that marks its open drafts (the built-in one) reads
    /// the mark and marks the new draft. Off, it writes no mark. The keys a
    /// backend hands the key lookup name the mark whatever this says: they
    /// are chosen before the tenant's policy, read in that same batch, can
    /// turn the check on or off.
    pub marked: bool,
}

/// The window a near-duplicate check looks back over: drafts made since
/// `since` and still open at `now`.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The oldest a draft may be.
    pub since: DateTime<Utc>,
    /// Now.
    pub now: DateTime<Utc>,
}

/// What a draft reads before it is priced, whatever its kind.
#[derive(Debug, Clone)]
pub struct DraftReads {
    /// What it read of its counterparty, by kind.
    pub counterparty: CounterpartyReads,
    /// The wanted items that exist, by code.
    pub items: HashMap<String, Item>,
    /// The open drafts of the same counterparty (and items), when a window was given.
    pub open: OpenDrafts,
}

/// What a draft reads of its counterparty: a kind's own reads.
#[derive(Debug, Clone)]
pub enum CounterpartyReads {
    /// A purchase order's vendor and its prices: at least those of the
    /// wanted items (a backend may answer its whole list); `None` if there
    /// is no such vendor.
    Vendor(Option<(Vendor, Vec<PriceEntry>)>),
    /// A quote's customer, the tenant's tax types, and what the backend
    /// read with them. What it leaves out (`None`) the quote reads once the
    /// customer is known: its standing from its orders and invoices, its
    /// prices from its price list.
    Customer {
        /// The customer, if the branch has it.
        customer: Option<Customer>,
        /// The tenant's tax types.
        taxes: Vec<TaxType>,
        /// What the customer owes, where the backend keeps it by key.
        standing: Option<CreditStanding>,
        /// The prices of the wanted items on the customer's price list, in
        /// every unit it prices them in, where the backend read them.
        prices: Option<Vec<ListPrice>>,
    },
}

/// The filters of a purchase-order search (a listing's cursor is bound
/// to them as they serialize).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PoFilter {
    /// Only orders in this status.
    pub status: Option<PoStatus>,
    /// Only orders to this vendor.
    pub vendor_code: Option<String>,
    /// Only orders created on or after this day (UTC).
    pub created_from: Option<NaiveDate>,
    /// Only orders created on or before this day (UTC).
    pub created_to: Option<NaiveDate>,
}

/// Items, units and stock.
#[async_trait]
pub trait Inventory: Send + Sync {
    /// One item of the item master.
    async fn item(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Item>, ErpError>;
    /// Items by code; missing codes are absent from the map.
    async fn items(&self, scope: &Scope<'_>, codes: &[String]) -> Result<HashMap<String, Item>, ErpError>;
    /// An item's stock in every warehouse of the branch and its reorder policy.
    async fn item_stock(
        &self,
        scope: &Scope<'_>,
        item: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ErpError>;
    /// One item of the item master with its stock in every warehouse of the
    /// branch and its reorder policy; `None` when the item master has no
    /// such item (whatever the branch stocks). By default [`Inventory::item`]
    /// and [`Inventory::item_stock`], read concurrently; a backend that keeps
    /// the item next to its stock reads them together.
    async fn item_with_stock(&self, scope: &Scope<'_>, code: &str) -> Result<Option<ItemStock>, ErpError> {
        let (item, (levels, policy)) = tokio::try_join!(self.item(scope, code), self.item_stock(scope, code))?;
        Ok(item.map(|item| ItemStock { item, levels, policy }))
    }
    /// Up to `want` items of the branch at or below their reorder point, in
    /// item code order, after item `after`; `next_after` when more follow.
    async fn due_items(&self, scope: &Scope<'_>, after: Option<&str>, want: usize) -> Result<Page<DueItem>, ErpError>;
}

/// Vendors, their prices, and purchase orders.
#[async_trait]
pub trait Purchasing: Inventory {
    /// A vendor's profile and price list.
    async fn vendor_with_prices(
        &self,
        scope: &Scope<'_>,
        code: &str,
    ) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError>;
    /// Prices for `(vendor, item, unit)` triples; missing ones are absent.
    async fn vendor_prices(
        &self,
        scope: &Scope<'_>,
        wanted: &[(String, String, Uom)],
    ) -> Result<Vec<PriceEntry>, ErpError>;
    /// Every vendor that supplies the branch.
    async fn branch_vendors(&self, scope: &Scope<'_>) -> Result<Vec<BranchVendor>, ErpError>;
    /// Items and branch vendors by code, together; missing ones are absent.
    async fn items_and_branch_vendors(
        &self,
        scope: &Scope<'_>,
        items: &[String],
        vendors: &[String],
    ) -> Result<(HashMap<String, Item>, HashMap<String, BranchVendor>), ErpError>;
    /// PO `number` of the branch.
    async fn purchase_order(&self, scope: &Scope<'_>, number: &str) -> Result<Option<PurchaseOrder>, ErpError>;
    /// Up to `limit` POs of the branch matching `filter`, highest number
    /// first, after PO `after`; reads at most `max_pages` pages of storage.
    async fn search_purchase_orders(
        &self,
        scope: &Scope<'_>,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
        max_pages: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError>;
}

/// Customers, their orders, price lists and quotes.
#[async_trait]
pub trait Sales: Inventory + Finance {
    /// Every customer of the branch.
    async fn customers(&self, scope: &Scope<'_>) -> Result<Vec<Customer>, ErpError>;
    /// One customer of the branch.
    async fn customer(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Customer>, ErpError>;
    /// The customer's sales orders.
    async fn customer_orders(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<SalesOrder>, ErpError>;
    /// The customer's invoices.
    async fn customer_invoices(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<CustomerInvoice>, ErpError>;
    /// Prices of price list `list` for `(item, unit)` pairs; missing ones are absent.
    async fn list_prices(
        &self,
        scope: &Scope<'_>,
        list: &str,
        wanted: &[(String, Uom)],
    ) -> Result<Vec<ListPrice>, ErpError>;
    /// Quote `number` of the branch.
    async fn quote(&self, scope: &Scope<'_>, number: &str) -> Result<Option<Quote>, ErpError>;
}

/// Drafts of every kind: the operations the draft engine
/// ([`crate::drafting`]) takes each document through, the kind a value.
#[async_trait]
pub trait Drafting: Purchasing + Sales {
    /// The keys of draftline's table a draft of `kind` for `wanted` reads,
    /// for the key lookup's one batch, where the backend keeps its data
    /// there. `None` (the default): [`Drafting::read_for_draft`] reads for
    /// itself.
    fn draft_reads(&self, _scope: &Scope<'_>, _kind: DocumentKind, _wanted: &Wanted<'_>) -> Option<Vec<TableKey>> {
        None
    }
    /// What a draft of `kind` for `wanted` reads before it is priced: its
    /// counterparty (with what the kind reads of it), the items, and the
    /// open drafts of the counterparty in `open` (none when no window is
    /// given). From `found` where the key lookup's batch read them
    /// ([`Drafting::draft_reads`]); else by the backend's own reads: by
    /// default [`read_by_parts`].
    async fn read_for_draft(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        wanted: &Wanted<'_>,
        open: Option<Window>,
        _found: Option<&Found>,
    ) -> Result<DraftReads, ErpError> {
        read_by_parts(self, scope, kind, wanted, open).await
    }
    /// The branch's drafts of `kind` for `counterparty` drafted through
    /// draftline since `since` and still open at `now` (no person decided
    /// on them yet): the near-duplicate check's candidates.
    async fn open_drafts(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        counterparty: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<OpenDraft>, ErpError>;
    /// Places a checked draft: numbers it (as of `now`) and prepares its
    /// writes, or hands back a document to create in the ERP. Writes nothing
    /// but, on a backend that numbers from draftline's table, the number.
    /// `seen` is what the near-duplicate check read (see [`Seen`]).
    async fn place_draft(
        &self,
        scope: &Scope<'_>,
        draft: NewDraft,
        draft_key: Option<&str>,
        seen: Seen,
        now: DateTime<Utc>,
    ) -> Result<Placement<Document>, ErpError>;
}

/// What a draft of `kind` reads, read by the port's own operations, at
/// once: the counterparty ([`Purchasing::vendor_with_prices`], or
/// [`Sales::customer`] and [`Finance::tax_types`]), [`Inventory::items`]
/// and [`Drafting::open_drafts`].
pub async fn read_by_parts<E: Drafting + ?Sized>(
    erp: &E,
    scope: &Scope<'_>,
    kind: DocumentKind,
    wanted: &Wanted<'_>,
    open: Option<Window>,
) -> Result<DraftReads, ErpError> {
    let open_drafts = async {
        match open {
            Some(w) => erp.open_drafts(scope, kind, wanted.counterparty, w.since, w.now).await,
            None => Ok(Vec::new()),
        }
    };
    let counterparty = async {
        match kind {
            DocumentKind::PurchaseOrder => Ok(CounterpartyReads::Vendor(
                erp.vendor_with_prices(scope, wanted.counterparty).await?,
            )),
            DocumentKind::Quote => {
                let (customer, taxes) =
                    tokio::try_join!(erp.customer(scope, wanted.counterparty), erp.tax_types(scope))?;
                let (standing, prices) = (None, None);
                Ok(CounterpartyReads::Customer {
                    customer,
                    taxes,
                    standing,
                    prices,
                })
            }
        }
    };
    let (counterparty, items, open) = tokio::try_join!(counterparty, erp.items(scope, wanted.items), open_drafts)?;
    Ok(DraftReads {
        counterparty,
        items,
        open: OpenDrafts::from(open),
    })
}

/// Taxes and the ledger's open items.
#[async_trait]
pub trait Finance: Send + Sync {
    /// The tenant's tax types.
    async fn tax_types(&self, scope: &Scope<'_>) -> Result<Vec<TaxType>, ErpError>;
    /// Every customer invoice of the branch.
    async fn receivables(&self, scope: &Scope<'_>) -> Result<Vec<CustomerInvoice>, ErpError>;
    /// Every vendor bill of the branch.
    async fn payables(&self, scope: &Scope<'_>) -> Result<Vec<VendorBill>, ErpError>;
}

/// Where people approve and reject agent drafts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    /// On draftline's review pages (the ERP has no workflow of its own here).
    InDraftline,
    /// In the ERP's own workflow; the review pages link to the document there.
    InErp {
        /// The ERP's name as people know it ("Tryton"), for the pages that send them there.
        erp: &'static str,
    },
}

/// How a person's decision is recorded.
pub enum DecisionPlacement {
    /// Record it with these writes, committed with the decision's audit item
    /// in one transaction of draftline's table.
    Atomic {
        /// The decided document.
        document: DocumentRef,
        /// Its writes.
        writes: WriteSet,
    },
    /// This very decision (same decision id) is already recorded: a double
    /// click. Nothing to write.
    AlreadyRecorded {
        /// The document.
        document: DocumentRef,
        /// The decision on it.
        decision: Decision,
    },
}

/// The people's side: the queue of agent drafts, and decisions on them.
#[async_trait]
pub trait Review: Send + Sync {
    /// Where approvals happen for this ERP: on draftline's review pages
    /// unless the ERP decides in its own workflow.
    fn approvals(&self) -> Approvals {
        Approvals::InDraftline
    }
    /// The document's page in the ERP, where people approve there (none
    /// when approvals happen in draftline).
    fn erp_link(&self, _kind: DocumentKind, _id: &str) -> Option<String> {
        None
    }
    /// The branch's agent drafts matching `filter`, newest first, after
    /// position `after` (from `next_after`).
    async fn agent_drafts(
        &self,
        scope: &Scope<'_>,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError>;
    /// Prepares a person's decision on draft `number` of the branch: the
    /// writes that record it, or that it is already recorded. A document
    /// that is not a draft any more, or another branch's, is refused.
    async fn place_decision(
        &self,
        scope: &Scope<'_>,
        number: &str,
        decision: NewDecision,
    ) -> Result<DecisionPlacement, ErpError>;
    /// `tenant`'s agent drafts a person decided in the ERP's own workflow
    /// and the ERP changed at or after `since` (all, without), oldest
    /// change first, at most `limit`. An ERP whose decisions are made on
    /// draftline's pages has none to tell: each announced itself.
    async fn decided_since(
        &self,
        _tenant: &TenantId,
        _since: Option<DateTime<Utc>>,
        _limit: usize,
    ) -> Result<Vec<DecidedDraft>, ErpError> {
        Ok(Vec::new())
    }
}

/// A whole ERP, as the tools and the review pages see it.
pub trait Erp: Inventory + Purchasing + Sales + Finance + Drafting + Review + 'static {}

impl<T: Inventory + Purchasing + Sales + Finance + Drafting + Review + 'static> Erp for T {}

#[cfg(test)]
mod tests {
    use super::Page;

    #[test]
    fn a_page_keeps_what_was_wanted_and_continues_after_its_last_only_when_more_followed() {
        let more = Page::first(vec![1, 2, 3], 2, |n| n.to_string());
        assert_eq!((more.items, more.next_after.as_deref()), (vec![1, 2], Some("2")));
        let all = Page::first(vec![1, 2], 2, |n| n.to_string()).map(|n| n * 10);
        assert_eq!((all.items, all.next_after), (vec![10, 20], None));
        let none = Page::first(Vec::<i32>::new(), 0, |n| n.to_string());
        assert_eq!((none.items.len(), none.next_after), (0, None));
    }
}
