//! # draftline-erp-tryton
//!
//! The Tryton backend of the ERP port: [`TrytonErp`] implements
//! [`draftline_erp::port::Erp`] over Tryton 8's REST API
//! (`/<database>/rest/model/…`, a bearer key, the context `{"company": 1}`),
//! for one database = one tenant, branches = warehouses by code. Drafts are
//! [`Placement::External`](draftline_erp::port::Placement): the server claims
//! the key under a lease, and the draft's one `POST` carries `draftline_key`,
//! which the project's Tryton module keeps unique per company.
//! `tryton/MAPPING.md` says what maps to what, `tryton/REST.md` shows every
//! call with real answers.
//!
//! Every query is filtered on draftline's side by the caller's tenant (the
//! database), warehouse (`warehouse.code`, its storage locations, or the
//! branch's party categories) and company, whatever the key could see: another
//! branch's document reads exactly like a missing one.
//!
//! ## Layout
//! - [`settings`][]: [`TrytonSettings`] (URL, database, key, tenant, timeouts)
//!   and [`TrytonKey`], which never shows in `Debug` output.
//! - `rest`: the HTTP client — counted requests, bounded answers, and the one
//!   table that turns every failure into the contract's error.
//! - `value`: Tryton's JSON values (records, Decimal, dates) both ways;
//!   `units`: draftline units ⇄ `product.uom` symbols.
//! - `master`: master data kept per instance (company, warehouses and
//!   storage locations, units) and the ids drafts need.
//! - `inventory`, `purchasing`, `sales`, `finance`: the port's reads, one file
//!   per trait, each mapping Tryton records to domain types.
//! - `drafts`: purchase and quote drafts as external documents (`create`,
//!   `find` by key), and the open drafts the near-duplicate check reads.
//! - `review`: the review queue of agent drafts; approvals happen in
//!   Tryton's own workflow, linked in Tryton's web client (sao).
//! - [`local`][]: [`LocalTryton`], a trytond with the seeded demo database(s)
//!   on this machine, for `draftline serve --erp tryton` and the tests; the
//!   Python side (`tryton/`) is embedded in the binary (`embedded`).

// One bad value from Tryton must be an error, never a panic.
#![cfg_attr(not(test), deny(clippy::arithmetic_side_effects))]

/// The fields of a draft document (`purchase.purchase`, `sale.sale`): the
/// kind's own fields given, then the provenance draftline's module adds and
/// the lines both kinds read the same way.
macro_rules! draft_fields {
    ($($own:literal),* $(,)?) => {
        &[
            $($own,)*
            "draftline_key",
            "draftline_client_ref",
            "drafted_by_agent_run",
            "drafted_on_behalf_of",
            "drafted_by_tool_call",
            "draftline_decided_by",
            "write_date",
            "lines.type",
            "lines.product.code",
            "lines.product.name",
            "lines.product.default_uom.symbol",
            "lines.quantity",
            "lines.unit.symbol",
            "lines.unit_price",
            "lines.note",
        ]
    };
}

mod documents;
mod drafts;
mod embedded;
mod finance;
mod inventory;
pub mod local;
mod master;
mod purchasing;
mod rest;
mod review;
mod sales;
pub mod settings;
mod units;
mod value;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use draftline_contract::identity::TenantId;
use draftline_contract::store::Found;
use draftline_contract::{ErpError, Refusal};
use draftline_erp::domain::{
    AgentDraft, BranchVendor, Customer, CustomerInvoice, DecidedDraft, Document, DocumentKind, DraftFilter, Item,
    ListPrice, NewDecision, NewDraft, OpenDraft, OpenDrafts, PriceEntry, PurchaseOrder, Quote, ReorderPolicy,
    SalesOrder, Seen, StockLevel, TaxType, Vendor, VendorBill,
};
use draftline_erp::port::{
    Approvals, CounterpartyReads, DecisionPlacement, DraftReads, Drafting, DueItem, Finance, Inventory, Page,
    Placement, PoFilter, Purchasing, Review, Sales, Scope, Wanted, Window, read_by_parts,
};
use draftline_erp::units::Uom;

pub use local::{LocalDatabase, LocalPerson, LocalTryton};
pub use settings::{SettingsError, TrytonKey, TrytonSettings};

use crate::master::Master;
use crate::rest::Rest;

/// The ERP port over one Tryton database. Cheap to share (`Arc` inside);
/// build it once per instance, so its master data is read once.
#[derive(Clone)]
pub struct TrytonErp {
    inner: Arc<Inner>,
}

/// What the port's methods and the drafts share.
pub(crate) struct Inner {
    rest: Rest,
    tenant: TenantId,
    master: Master,
}

impl Inner {
    /// Whether `scope` is of the tenant this database serves.
    fn serves(&self, scope: &Scope<'_>) -> bool {
        scope.tenant == &self.tenant
    }
}

impl std::fmt::Debug for TrytonErp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrytonErp")
            .field("tenant", &self.inner.tenant)
            .field("rest", &self.inner.rest)
            .finish_non_exhaustive()
    }
}

impl TrytonErp {
    /// The backend of `settings`. Makes no request: master data is read on
    /// first use.
    pub fn new(settings: &TrytonSettings) -> Result<Self, SettingsError> {
        Ok(Self {
            inner: Arc::new(Inner {
                rest: Rest::new(settings)?,
                tenant: settings.tenant_id()?,
                master: Master::default(),
            }),
        })
    }

    /// How many HTTP requests this instance has sent to Tryton (failed ones included).
    pub fn requests(&self) -> u64 {
        self.inner.rest.requests()
    }

    /// The tenant this database serves.
    pub fn tenant(&self) -> &TenantId {
        &self.inner.tenant
    }

    /// The database.
    pub fn database(&self) -> &str {
        self.inner.rest.database()
    }
}

#[async_trait]
impl Inventory for TrytonErp {
    async fn item(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Item>, ErpError> {
        let read = async { Ok(self.inner.items(&[code.to_owned()]).await?.remove(code)) };
        self.served(scope, read).await
    }

    async fn items(&self, scope: &Scope<'_>, codes: &[String]) -> Result<HashMap<String, Item>, ErpError> {
        self.served(scope, self.inner.items(codes)).await
    }

    async fn item_stock(
        &self,
        scope: &Scope<'_>,
        item: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ErpError> {
        self.served(scope, self.inner.item_stock(scope.branch.as_str(), item))
            .await
    }

    async fn due_items(&self, scope: &Scope<'_>, after: Option<&str>, want: usize) -> Result<Page<DueItem>, ErpError> {
        self.served(scope, self.inner.due_items(scope.branch.as_str(), after, want))
            .await
    }
}

#[async_trait]
impl Purchasing for TrytonErp {
    async fn vendor_with_prices(
        &self,
        scope: &Scope<'_>,
        code: &str,
    ) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError> {
        self.served(scope, self.inner.vendor_with_prices(code)).await
    }

    async fn vendor_prices(
        &self,
        scope: &Scope<'_>,
        wanted: &[(String, String, Uom)],
    ) -> Result<Vec<PriceEntry>, ErpError> {
        self.served(scope, self.inner.vendor_prices(wanted)).await
    }

    async fn branch_vendors(&self, scope: &Scope<'_>) -> Result<Vec<BranchVendor>, ErpError> {
        self.served(scope, self.inner.branch_vendors(scope.branch.as_str()))
            .await
    }

    async fn items_and_branch_vendors(
        &self,
        scope: &Scope<'_>,
        items: &[String],
        vendors: &[String],
    ) -> Result<(HashMap<String, Item>, HashMap<String, BranchVendor>), ErpError> {
        self.served(
            scope,
            self.inner
                .items_and_branch_vendors(scope.branch.as_str(), items, vendors),
        )
        .await
    }

    async fn purchase_order(&self, scope: &Scope<'_>, number: &str) -> Result<Option<PurchaseOrder>, ErpError> {
        self.served(scope, self.inner.purchase_order(scope.branch.as_str(), number))
            .await
    }

    async fn search_purchase_orders(
        &self,
        scope: &Scope<'_>,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
        _max_pages: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError> {
        // Tryton filters in its query: one request, whatever max_pages allows.
        self.served(
            scope,
            self.inner
                .search_purchase_orders(scope.branch.as_str(), filter, after, limit),
        )
        .await
    }
}

#[async_trait]
impl Drafting for TrytonErp {
    /// A purchase order's: two requests, made together with the open
    /// drafts' search: the vendor, and the items with their price-list rows
    /// (the vendor's whole list is not read). A quote's: the port's own
    /// reads (the customer, the items, the tax types, the open drafts).
    async fn read_for_draft(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        wanted: &Wanted<'_>,
        open: Option<Window>,
        _found: Option<&Found>,
    ) -> Result<DraftReads, ErpError> {
        match kind {
            DocumentKind::Quote => return read_by_parts(self, scope, kind, wanted, open).await,
            DocumentKind::PurchaseOrder if !self.inner.serves(scope) => {
                return Ok(DraftReads {
                    counterparty: CounterpartyReads::Vendor(None),
                    items: HashMap::new(),
                    open: OpenDrafts::default(),
                });
            }
            DocumentKind::PurchaseOrder => {}
        }
        let open_drafts = async {
            match open {
                Some(w) => self.open_drafts(scope, kind, wanted.counterparty, w.since, w.now).await,
                None => Ok(Vec::new()),
            }
        };
        let ((vendor, items), open) = tokio::try_join!(
            self.inner.vendor_and_items(wanted.counterparty, wanted.items),
            open_drafts
        )?;
        Ok(DraftReads {
            counterparty: CounterpartyReads::Vendor(vendor),
            items,
            open: OpenDrafts::from(open),
        })
    }

    async fn open_drafts(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        counterparty: &str,
        since: DateTime<Utc>,
        // Tryton's own state says whether a draft is still open.
        _now: DateTime<Utc>,
    ) -> Result<Vec<OpenDraft>, ErpError> {
        self.served(
            scope,
            self.inner.open_drafts(kind, scope.branch.as_str(), counterparty, since),
        )
        .await
    }

    async fn place_draft(
        &self,
        scope: &Scope<'_>,
        draft: NewDraft,
        draft_key: Option<&str>,
        _seen: Seen,
        now: DateTime<Utc>,
    ) -> Result<Placement<Document>, ErpError> {
        let key = self.draft_key(scope, draft_key)?;
        let branch = scope.branch.as_str();
        let document = drafts::draft(&self.inner, branch, &draft, key, now.date_naive()).await?;
        Ok(Placement::External(Box::new(document)))
    }
}

#[async_trait]
impl Sales for TrytonErp {
    async fn customers(&self, scope: &Scope<'_>) -> Result<Vec<Customer>, ErpError> {
        self.served(scope, self.inner.customers(scope.branch.as_str(), None))
            .await
    }

    async fn customer(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Customer>, ErpError> {
        let read = async { Ok(self.inner.customers(scope.branch.as_str(), Some(code)).await?.pop()) };
        self.served(scope, read).await
    }

    async fn customer_orders(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<SalesOrder>, ErpError> {
        self.served(scope, self.inner.customer_orders(scope.branch.as_str(), code))
            .await
    }

    async fn customer_invoices(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<CustomerInvoice>, ErpError> {
        self.served(scope, self.inner.receivables(scope.branch.as_str(), Some(code)))
            .await
    }

    async fn list_prices(
        &self,
        scope: &Scope<'_>,
        list: &str,
        wanted: &[(String, Uom)],
    ) -> Result<Vec<ListPrice>, ErpError> {
        self.served(scope, self.inner.list_prices(list, wanted)).await
    }

    async fn quote(&self, scope: &Scope<'_>, number: &str) -> Result<Option<Quote>, ErpError> {
        self.served(scope, self.inner.quote(scope.branch.as_str(), number))
            .await
    }
}

#[async_trait]
impl Finance for TrytonErp {
    async fn tax_types(&self, scope: &Scope<'_>) -> Result<Vec<TaxType>, ErpError> {
        self.served(scope, self.inner.tax_types(Utc::now().date_naive())).await
    }

    async fn receivables(&self, scope: &Scope<'_>) -> Result<Vec<CustomerInvoice>, ErpError> {
        self.served(scope, self.inner.receivables(scope.branch.as_str(), None))
            .await
    }

    async fn payables(&self, scope: &Scope<'_>) -> Result<Vec<VendorBill>, ErpError> {
        self.served(scope, self.inner.payables(scope.branch.as_str())).await
    }
}

#[async_trait]
impl Review for TrytonErp {
    fn approvals(&self) -> Approvals {
        // A person approves in Tryton (quote, confirm); draftline records nothing.
        Approvals::InErp { erp: "Tryton" }
    }

    fn erp_link(&self, kind: DocumentKind, id: &str) -> Option<String> {
        review::erp_link(self.inner.rest.base(), self.inner.rest.database(), kind, id)
    }

    async fn agent_drafts(
        &self,
        scope: &Scope<'_>,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError> {
        self.served(
            scope,
            self.inner.agent_drafts(scope.branch.as_str(), filter, after, limit),
        )
        .await
    }

    async fn place_decision(
        &self,
        _scope: &Scope<'_>,
        number: &str,
        _decision: NewDecision,
    ) -> Result<DecisionPlacement, ErpError> {
        // A person approves in Tryton's own workflow (Approvals::InErp):
        // the review pages link there and never post a decision here.
        Err(ErpError::Refused(Refusal::DecidedInErp {
            number: number.to_owned(),
            erp: "Tryton",
            how: "Quote, Confirm or Cancel on the document there",
        }))
    }

    async fn decided_since(
        &self,
        tenant: &TenantId,
        since: Option<DateTime<Utc>>,
        limit: usize,
    ) -> Result<Vec<DecidedDraft>, ErpError> {
        if tenant != &self.inner.tenant {
            return Ok(Vec::new());
        }
        self.inner.decided_since(since, limit).await
    }
}

impl TrytonErp {
    /// What `read` answers for a caller of the tenant this database
    /// serves; for any other, nothing (the empty answer, and no request).
    async fn served<T: Default>(
        &self,
        scope: &Scope<'_>,
        read: impl Future<Output = Result<T, ErpError>> + Send,
    ) -> Result<T, ErpError> {
        if !self.inner.serves(scope) {
            return Ok(T::default());
        }
        read.await
    }

    /// The key a draft is created under: only for this database's tenant,
    /// and never without one (the lease protocol needs it to find the draft).
    fn draft_key<'k>(&self, scope: &Scope<'_>, draft_key: Option<&'k str>) -> Result<&'k str, ErpError> {
        if !self.inner.serves(scope) {
            return Err(ErpError::internal(format!(
                "tenant {} is not served by Tryton database {} (it serves tenant {}); no draft was created",
                scope.tenant,
                self.inner.rest.database(),
                self.inner.tenant
            )));
        }
        draft_key.ok_or_else(|| {
            ErpError::internal("a Tryton draft needs its draftline key (Call::draft_key); no draft was created")
        })
    }
}
