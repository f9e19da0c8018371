//! # draftline-erp-builtin
//!
//! The built-in ERP backend: the demo ERP's data model in draftline's own
//! DynamoDB table, the embedded default of `draftline serve`. It implements
//! the ERP port ([`draftline_erp::port::Erp`]) and nothing else. Because its
//! documents live in the same table as the key records and audit items, a
//! draft is placed as an atomic, store-neutral
//! [`WriteSet`](draftline_contract::store::WriteSet): the server commits it
//! in the one `TransactWriteItems` with them.
//!
//! ## Layout
//! - [`model`]: every domain type's key and item mapping (`<Type>Record`);
//!   [`keys`]: every key. All keys start with `T#<tenant>`, branch-owned
//!   data carries the branch in its partition key, so no query can cross a
//!   branch by construction.
//! - [`store`]: the reads, scoped by tenant and branch (listings stop at a
//!   page and hand back a position for the sealed cursor), and the number
//!   counter. A port read of one item (`GetItem`) or one partition (a
//!   `Query`, following pages) names its key here and reads through
//!   [`store::ErpStore::get_one`] or [`store::ErpStore::query_as`].
//! - [`seed`]: writing the demo story once.

pub mod drafting;
pub mod keys;
pub mod model;
pub mod seed;
pub mod store;

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use draftline_contract::store::{Found, TableKey, Value};
use draftline_contract::{ErpError, Refusal};
use draftline_dynamo::Db;
use draftline_erp::domain::{
    AgentDraft, BranchVendor, Customer, CustomerInvoice, Document, DocumentKind, DraftFilter, Item, ListPrice,
    NewDecision, NewDraft, OpenDraft, PriceEntry, PurchaseOrder, Quote, ReorderPolicy, SalesOrder, Seen, StockLevel,
    TaxType, Vendor, VendorBill,
};
use draftline_erp::numbers;
use draftline_erp::port::{
    DecisionPlacement, DraftReads, Drafting, DueItem, Finance, Inventory, ItemStock, Page, Placement, PoFilter,
    Purchasing, Review, Sales, Scope, Wanted, Window,
};
use draftline_erp::units::Uom;

use crate::model::{AgentDraftRecord, BranchRecord, BranchVendorRecord, CustomerRecord, DocumentRecord, TaxTypeRecord};
use crate::store::ErpStore;

/// The demo ERP in draftline's table.
#[derive(Debug, Clone)]
pub struct BuiltinErp {
    db: Db,
}

impl BuiltinErp {
    /// The backend over `db` (the same client the server uses, so one
    /// instance counts every round trip).
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    fn store<'a>(&'a self, scope: &Scope<'a>) -> ErpStore<'a> {
        ErpStore::new(&self.db, scope.tenant)
    }

    fn id(prefix: &str) -> String {
        format!("{prefix}_{}", ulid::Ulid::new().to_string().to_lowercase())
    }
}

#[async_trait]
impl Inventory for BuiltinErp {
    async fn item(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Item>, ErpError> {
        self.store(scope).item(code).await
    }

    async fn items(&self, scope: &Scope<'_>, codes: &[String]) -> Result<HashMap<String, Item>, ErpError> {
        self.store(scope).items(codes).await
    }

    async fn item_stock(
        &self,
        scope: &Scope<'_>,
        item: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ErpError> {
        let (_, levels, policy) = self.store(scope).stock_records(scope.branch, item).await?;
        Ok((levels, policy))
    }

    async fn item_with_stock(&self, scope: &Scope<'_>, code: &str) -> Result<Option<ItemStock>, ErpError> {
        self.store(scope).item_with_stock(scope.branch, code).await
    }

    async fn due_items(&self, scope: &Scope<'_>, after: Option<&str>, want: usize) -> Result<Page<DueItem>, ErpError> {
        self.store(scope).due_items(scope.branch, after, want).await
    }
}

#[async_trait]
impl Purchasing for BuiltinErp {
    async fn vendor_with_prices(
        &self,
        scope: &Scope<'_>,
        code: &str,
    ) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError> {
        self.store(scope).vendor_with_prices(code).await
    }

    async fn vendor_prices(
        &self,
        scope: &Scope<'_>,
        wanted: &[(String, String, Uom)],
    ) -> Result<Vec<PriceEntry>, ErpError> {
        self.store(scope).vendor_prices(wanted).await
    }

    async fn branch_vendors(&self, scope: &Scope<'_>) -> Result<Vec<BranchVendor>, ErpError> {
        let pk = keys::branch_vendors(scope.tenant, scope.branch);
        self.store(scope).query_as(&pk, None, BranchVendor::from_item).await
    }

    async fn items_and_branch_vendors(
        &self,
        scope: &Scope<'_>,
        items: &[String],
        vendors: &[String],
    ) -> Result<(HashMap<String, Item>, HashMap<String, BranchVendor>), ErpError> {
        self.store(scope)
            .items_and_branch_vendors(scope.branch, items, vendors)
            .await
    }

    async fn purchase_order(&self, scope: &Scope<'_>, number: &str) -> Result<Option<PurchaseOrder>, ErpError> {
        let key = PurchaseOrder::key(scope.tenant, scope.branch, number);
        self.store(scope).get_one(key, PurchaseOrder::from_item).await
    }

    async fn search_purchase_orders(
        &self,
        scope: &Scope<'_>,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
        max_pages: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError> {
        self.store(scope)
            .search_purchase_orders(scope.branch, filter, after, limit, max_pages)
            .await
    }
}

#[async_trait]
impl Drafting for BuiltinErp {
    fn draft_reads(&self, scope: &Scope<'_>, kind: DocumentKind, wanted: &Wanted<'_>) -> Option<Vec<TableKey>> {
        Some(drafting::reads(scope, kind, wanted))
    }

    async fn read_for_draft(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        wanted: &Wanted<'_>,
        open: Option<Window>,
        found: Option<&Found>,
    ) -> Result<DraftReads, ErpError> {
        drafting::read(&self.store(scope), scope, kind, wanted, open, found).await
    }

    async fn open_drafts(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        counterparty: &str,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<OpenDraft>, ErpError> {
        // A decision takes its draft off its marker: listed means open now.
        self.store(scope)
            .open_drafts(scope.branch, kind.prefix(), counterparty, &Window { since, now })
            .await
    }

    async fn place_draft(
        &self,
        scope: &Scope<'_>,
        draft: NewDraft,
        _draft_key: Option<&str>,
        seen: Seen,
        now: DateTime<Utc>,
    ) -> Result<Placement<Document>, ErpError> {
        let kind = draft.kind();
        let sequence = self.store(scope).reserve_number(scope.branch, kind.prefix()).await?;
        let number = numbers::document_number(kind.prefix(), scope.branch_code, sequence)?;
        let created_at = now.to_rfc3339_opts(SecondsFormat::Millis, true);
        let document = draft.numbered(Self::id(kind.id_prefix()), number, created_at);
        let open = document.open_draft();
        let items = open.item_set();
        let marked = drafting::marker(scope, kind, &open.counterparty, &items).add(&open, &seen, now)?;
        let (tenant, branch) = (scope.tenant, scope.branch);
        let entry = document.queue_entry();
        let stored = model::document::to_item(&document, &entry, tenant, branch)?;
        let writes = store::document_writes(vec![stored, entry.to_item(tenant, branch)?], marked)?;
        Ok(Placement::Atomic { document, writes })
    }
}

#[async_trait]
impl Sales for BuiltinErp {
    async fn customers(&self, scope: &Scope<'_>) -> Result<Vec<Customer>, ErpError> {
        let pk = keys::customers(scope.tenant, scope.branch);
        self.store(scope).query_as(&pk, None, Customer::from_item).await
    }

    async fn customer(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Customer>, ErpError> {
        // Another branch's customer is simply not there.
        let key = Customer::key(scope.tenant, scope.branch, code);
        self.store(scope).get_one(key, Customer::from_item).await
    }

    async fn customer_orders(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<SalesOrder>, ErpError> {
        let pk = keys::sales_orders(scope.tenant, scope.branch);
        let prefix = keys::customer_docs_prefix(code);
        self.store(scope)
            .query_as(&pk, Some(&prefix), SalesOrder::from_item)
            .await
    }

    async fn customer_invoices(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<CustomerInvoice>, ErpError> {
        let pk = keys::receivables(scope.tenant, scope.branch);
        let prefix = keys::customer_docs_prefix(code);
        self.store(scope)
            .query_as(&pk, Some(&prefix), CustomerInvoice::from_item)
            .await
    }

    async fn list_prices(
        &self,
        scope: &Scope<'_>,
        list: &str,
        wanted: &[(String, Uom)],
    ) -> Result<Vec<ListPrice>, ErpError> {
        self.store(scope).list_prices(list, wanted).await
    }

    async fn quote(&self, scope: &Scope<'_>, number: &str) -> Result<Option<Quote>, ErpError> {
        let key = Quote::key(scope.tenant, scope.branch, number);
        self.store(scope).get_one(key, Quote::from_item).await
    }
}

#[async_trait]
impl Finance for BuiltinErp {
    async fn tax_types(&self, scope: &Scope<'_>) -> Result<Vec<TaxType>, ErpError> {
        let pk = keys::tax_types(scope.tenant);
        self.store(scope).query_as(&pk, None, TaxType::from_item).await
    }

    async fn receivables(&self, scope: &Scope<'_>) -> Result<Vec<CustomerInvoice>, ErpError> {
        let pk = keys::receivables(scope.tenant, scope.branch);
        self.store(scope).query_as(&pk, None, CustomerInvoice::from_item).await
    }

    async fn payables(&self, scope: &Scope<'_>) -> Result<Vec<VendorBill>, ErpError> {
        let pk = keys::payables(scope.tenant, scope.branch);
        self.store(scope).query_as(&pk, None, VendorBill::from_item).await
    }
}

#[async_trait]
impl Review for BuiltinErp {
    async fn agent_drafts(
        &self,
        scope: &Scope<'_>,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError> {
        self.store(scope).agent_drafts(scope.branch, filter, after, limit).await
    }

    async fn place_decision(
        &self,
        scope: &Scope<'_>,
        number: &str,
        decision: NewDecision,
    ) -> Result<DecisionPlacement, ErpError> {
        let not_found = || ErpError::NoSuchDraft {
            number: number.to_owned(),
        };
        let kind = DocumentKind::of_number(number).ok_or_else(not_found)?;
        let (tenant, branch) = (scope.tenant, scope.branch);
        let store = self.store(scope);
        let item = store
            .raw(model::document::key(kind, tenant, branch, number))
            .await?
            .ok_or_else(not_found)?;
        let recorded_id = item.get("decision_id").and_then(Value::as_s);
        let decided_at =
            chrono::DateTime::parse_from_rfc3339(&decision.decision.decided_at).map_or(0, |at| at.timestamp());
        let stored = model::document::from_item(kind, &item)?;
        let document = stored.document_ref();
        if let Some(earlier) = decision.against(number, stored.status(), stored.decision(), recorded_id)? {
            return Ok(DecisionPlacement::AlreadyRecorded {
                document,
                decision: earlier,
            });
        }
        let decided = stored.decided(decision.decision.clone());
        let (open, entry) = (decided.open_draft(), decided.queue_entry());
        let decided = model::document::to_item(&decided, &entry, tenant, branch)?;
        // Only drafts that came through draftline have a queue entry; one
        // drafted by hand in the ERP is decided there.
        let queued = store
            .raw(AgentDraft::key(tenant, branch, &entry.created_at, number))
            .await?;
        if queued.is_none() {
            return Err(ErpError::Refused(Refusal::NotDraftedHere {
                number: number.to_owned(),
            }));
        }
        // No longer open: it leaves its near-duplicate marker, the one
        // record of the branch's open drafts.
        let items = open.item_set();
        let unmarked = drafting::marker(scope, kind, &open.counterparty, &items).remove(number, decided_at);
        let writes = store::decision_writes(decided, &decision.decision_id, entry.to_item(tenant, branch)?, unmarked)?;
        Ok(DecisionPlacement::Atomic { document, writes })
    }
}
