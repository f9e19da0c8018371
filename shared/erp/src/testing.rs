//! An in-memory ERP for unit tests: the whole port ([`crate::port::Erp`]) over plain
//! Rust data behind a mutex, loaded from the demo story ([`crate::demo`]),
//! as serverless-rust-demo keeps a `MemoryStore` beside its DynamoDB store.
//! The tools' rules are unit-tested on it (each tool file's `mod tests`);
//! the black-box suite still runs every tool against the built-in and the
//! Tryton backend.
//!
//! It answers as the built-in backend does: every read is scoped by the
//! caller's tenant and branch (another branch's document reads like a
//! missing one, another tenant has nothing), listings come in the same order
//! and continue from the same positions, and drafts are numbered with the
//! same grammar and sequences (`PO-SBY-000004` after the three seeded
//! Surabaya agent POs). A draft is placed one of two ways ([`Placing`]):
//! as the built-in backend places it (numbered now, written when
//! [`MemoryErp::commit`] applies its write set, as the server's transaction
//! would), or as an ERP behind a lease (numbered when created, found again
//! by its draft key). [`MemoryErp::complete`] does with a prepared draft
//! what the server does with either. [`TestCaller`] holds what a
//! [`Call`] borrows: a demo user, a clock standing at the demo's today,
//! an agent context and a cursor key.
//!
//! Compiled for this crate's own tests and with the `testing` feature only:
//! no deployed function links it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use draftline_contract::clock::ManualClock;
use draftline_contract::cursor::CursorKey;
use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_contract::request::AgentContext;
use draftline_contract::store::{Attributes, Condition, TableKey, Update, Value, Write, WriteSet};
use draftline_contract::tool::{Call, Created, Draft, DraftTool};
use draftline_contract::{ErpError, Refusal, ToolError};

use crate::demo;
use crate::domain::{
    AgentDraft, BranchVendor, Customer, CustomerInvoice, Document, DocumentKind, DraftFilter, Item, ListPrice,
    NewDecision, NewDraft, OpenDraft, PriceEntry, PurchaseOrder, Quote, ReorderPolicy, Reviewable, SalesOrder, Seen,
    StockLevel, TaxType, Vendor, VendorBill,
};
use crate::numbers;
use crate::port::{
    DecisionPlacement, Drafting, DueItem, ExternalDocument, Finance, Inventory, Page, Placement, PoFilter, Purchasing,
    Review, Sales, Scope,
};
use crate::reorder;
use crate::units::Uom;

/// How many purchase orders one page of the built-in backend's search
/// evaluates: the `max_pages` budget of a search counts pages of this size.
const SEARCH_PAGE: usize = 200;

/// How a checked draft becomes a document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Placing {
    /// As the built-in backend does: numbered when placed (a number that is
    /// never committed leaves a gap), written by [`MemoryErp::commit`].
    #[default]
    Atomic,
    /// As an ERP behind a lease does (Tryton): numbered and written when
    /// created, keeping the draft key; `find` finds it again by that key,
    /// and a second `create` of one key hands back the first document.
    External,
}

/// A document as the in-memory ERP files it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filed<D> {
    /// The branch it belongs to (`SBY-01`).
    pub branch: String,
    /// The document.
    pub document: D,
    /// The draft key it was created under ([`Placing::External`] only: the
    /// built-in backend does not keep it).
    pub key: Option<String>,
    /// Drafted through draftline: in the review queue, decided there.
    pub queued: bool,
    /// Counted by the near-duplicate check while it is a draft: true for the
    /// drafts placed here, false for the seeded ones (as the built-in seed
    /// writes no open-draft record for them).
    pub open: bool,
    /// The id of the decision recorded on it: a double click sends the same one.
    pub decision_id: Option<String>,
}

impl<D> Filed<D> {
    fn seeded(branch: &str, document: D, queued: bool) -> Self {
        Self {
            branch: branch.to_owned(),
            document,
            key: None,
            queued,
            open: false,
            decision_id: None,
        }
    }
}

/// Everything the in-memory ERP holds. Branch-owned records are
/// `(branch id, record)`. Every field is public so that a test can set up
/// what the demo story lacks (a price too large to multiply, an invoice in
/// another currency); documents are written only through the port.
#[derive(Debug, Clone, Default)]
pub struct Books {
    /// The item master.
    pub items: Vec<Item>,
    /// The vendors; `branches` says which branches each supplies.
    pub vendors: Vec<Vendor>,
    /// The vendors' price lists.
    pub prices: Vec<PriceEntry>,
    /// Stock per warehouse.
    pub stock: Vec<(String, StockLevel)>,
    /// Reorder policies.
    pub policies: Vec<(String, ReorderPolicy)>,
    /// Each vendor's listing in every branch it supplies.
    pub branch_vendors: Vec<(String, BranchVendor)>,
    /// The tenant's tax types.
    pub tax_types: Vec<TaxType>,
    /// The sales price lists.
    pub list_prices: Vec<ListPrice>,
    /// Customers.
    pub customers: Vec<(String, Customer)>,
    /// Sales orders.
    pub sales_orders: Vec<(String, SalesOrder)>,
    /// Customer invoices.
    pub invoices: Vec<(String, CustomerInvoice)>,
    /// Vendor bills.
    pub bills: Vec<(String, VendorBill)>,
    /// Purchase orders: Jakarta's history and Surabaya's agent drafts, then
    /// every draft placed.
    pub purchase_orders: Vec<Filed<PurchaseOrder>>,
    /// Quotes: Bandung's agent drafts, then every draft placed.
    pub quotes: Vec<Filed<Quote>>,
    /// The last number handed out, per `(branch id, prefix)` (`PO`, `QT`).
    pub sequences: BTreeMap<(String, String), i64>,
}

fn owned<T>(records: Vec<(&'static str, T)>) -> Vec<(String, T)> {
    records
        .into_iter()
        .map(|(branch, record)| (branch.to_owned(), record))
        .collect()
}

impl Books {
    /// The demo story, as the built-in backend seeds it.
    pub fn demo() -> Self {
        let purchase_orders = demo::jakarta_purchase_orders()
            .into_iter()
            .map(|po| Filed::seeded("JKT-01", po, false))
            .chain(
                demo::agent_purchase_orders()
                    .into_iter()
                    .map(|(po, _)| Filed::seeded("SBY-01", po, true)),
            )
            .collect();
        let quotes = demo::agent_quotes()
            .into_iter()
            .map(|(quote, _)| Filed::seeded("BDG-01", quote, true))
            .collect();
        let sequences = [
            ("JKT-01", "PO", demo::JAKARTA_PO_COUNT),
            ("SBY-01", "PO", demo::SURABAYA_AGENT_PO_COUNT),
            ("BDG-01", "QT", demo::BANDUNG_AGENT_QUOTE_COUNT),
        ]
        .into_iter()
        .map(|(branch, prefix, last)| ((branch.to_owned(), prefix.to_owned()), last))
        .collect();
        Self {
            items: demo::items(),
            vendors: demo::vendors(),
            prices: demo::prices(),
            stock: owned(demo::stock()),
            policies: owned(demo::policies()),
            branch_vendors: owned(demo::branch_vendors()),
            tax_types: demo::tax_types(),
            list_prices: demo::list_prices(),
            customers: owned(demo::customers()),
            sales_orders: owned(demo::sales_orders()),
            invoices: owned(demo::invoices()),
            bills: owned(demo::bills()),
            purchase_orders,
            quotes,
            sequences,
        }
    }

    /// Reserves the next number of `prefix` in `branch` (never handed out twice).
    fn reserve(&mut self, branch: &str, prefix: &str) -> Result<i64, ErpError> {
        let last = self
            .sequences
            .entry((branch.to_owned(), prefix.to_owned()))
            .or_insert(0);
        *last = last
            .checked_add(1)
            .ok_or_else(|| ErpError::internal(format!("the {prefix} sequence of {branch} is exhausted")))?;
        Ok(*last)
    }

    /// Files `filed`, refusing a number its branch already has (the built-in
    /// backend's put only if the key is new).
    fn file<D: Filing>(&mut self, filed: Filed<D>) -> Result<(), ErpError> {
        let shelf = D::shelf_mut(self);
        if shelf
            .iter()
            .any(|f| f.branch == filed.branch && f.document.identity().1 == filed.document.identity().1)
        {
            return Err(ErpError::internal(format!(
                "{} of {} is already taken; nothing was written",
                filed.document.identity().1,
                filed.branch
            )));
        }
        shelf.push(filed);
        Ok(())
    }
}

/// Where the in-memory ERP files a document kind (the kind itself is
/// [`Reviewable`]), so purchase orders and quotes are filed, numbered and
/// decided by one code path.
trait Filing:
    Reviewable<Draft: Send + Sync + 'static>
    + Into<Document>
    + Clone
    + Send
    + Sync
    + serde::Serialize
    + serde::de::DeserializeOwned
    + 'static
{
    fn shelf(books: &Books) -> &[Filed<Self>];
    fn shelf_mut(books: &mut Books) -> &mut Vec<Filed<Self>>;
}

impl Filing for PurchaseOrder {
    fn shelf(books: &Books) -> &[Filed<Self>] {
        &books.purchase_orders
    }
    fn shelf_mut(books: &mut Books) -> &mut Vec<Filed<Self>> {
        &mut books.purchase_orders
    }
}

impl Filing for Quote {
    fn shelf(books: &Books) -> &[Filed<Self>] {
        &books.quotes
    }
    fn shelf_mut(books: &mut Books) -> &mut Vec<Filed<Self>> {
        &mut books.quotes
    }
}

/// The position of a review-queue entry, as the built-in backend sorts
/// the queue: creation time, then number.
fn queue_position(created_at: &str, number: &str) -> String {
    format!("{created_at}#{number}")
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A new document of `branch`, numbered from its sequence.
fn numbered<D: Filing>(
    books: &mut Books,
    branch: &str,
    code: &BranchCode,
    draft: &D::Draft,
    created_at: &str,
) -> Result<D, ErpError> {
    let sequence = books.reserve(branch, D::KIND.prefix())?;
    let number = numbers::document_number(D::KIND.prefix(), code, sequence)?;
    let id = format!("{}_{}", D::KIND.id_prefix(), number.to_lowercase());
    Ok(D::numbered(draft, id, number, created_at.to_owned()))
}

fn lock(books: &Mutex<Books>) -> MutexGuard<'_, Books> {
    books.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where the in-memory ERP's write set names a document: partition
/// `MEMORY#<branch>#<prefix>`, sort key its number.
fn memory_key(branch: &str, prefix: &str, number: &str) -> TableKey {
    TableKey {
        pk: format!("MEMORY#{branch}#{prefix}"),
        sk: number.to_owned(),
    }
}

/// Applies one write of a write set this ERP made to `books`, as the
/// server's transaction would: a new document put only if its number is
/// free; a decision only while its condition holds.
fn apply<D: Filing>(books: &mut Books, branch: &str, number: &str, write: &Write) -> Result<(), ErpError> {
    let text = |item: &Attributes, name: &str| {
        item.get(name)
            .and_then(Value::as_s)
            .map(str::to_owned)
            .ok_or_else(|| ErpError::internal(format!("a memory write without {name}")))
    };
    match write {
        Write::PutNew(item) => {
            let document: D = serde_json::from_str(&text(item, "document")?).map_err(ErpError::internal)?;
            books.file(Filed {
                branch: branch.to_owned(),
                document,
                key: None,
                queued: true,
                open: true,
                decision_id: None,
            })
        }
        Write::Update(update) => {
            let filed = D::shelf_mut(books)
                .iter_mut()
                .find(|f| f.branch == branch && f.document.identity().1 == number)
                .ok_or_else(|| ErpError::internal(format!("{number} vanished before its decision")))?;
            let mut stored = Attributes::from([
                ("pk".to_owned(), Value::s(number)),
                ("status".to_owned(), Value::s(filed.document.status())),
            ]);
            if let Some(decision_id) = &filed.decision_id {
                stored.insert("decision_id".to_owned(), Value::s(decision_id));
            }
            if let Some(condition) = &update.condition
                && !condition.holds(Some(&stored))
            {
                return Err(ErpError::internal(format!(
                    "{number} was decided meanwhile; nothing was written"
                )));
            }
            let set = |name: &str| update.set.iter().find(|(n, _)| n == name).and_then(|(_, v)| v.as_s());
            let (Some(decision), Some(decision_id)) = (set("decision"), set("decision_id")) else {
                return Err(ErpError::internal("a memory update without its decision"));
            };
            let decision = serde_json::from_str(decision).map_err(ErpError::internal)?;
            filed.document = filed.document.clone().decided(decision);
            filed.decision_id = Some(decision_id.to_owned());
            filed.open = false;
            Ok(())
        }
        Write::PutIf(..) | Write::Delete(..) => Err(ErpError::internal(
            "the in-memory ERP makes no conditional puts or deletes",
        )),
    }
}

/// The in-memory ERP of one tenant. Clones share the same books.
#[derive(Clone)]
pub struct MemoryErp {
    tenant: TenantId,
    placing: Placing,
    books: Arc<Mutex<Books>>,
}

impl std::fmt::Debug for MemoryErp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryErp")
            .field("tenant", &self.tenant)
            .field("placing", &self.placing)
            .finish_non_exhaustive()
    }
}

impl MemoryErp {
    /// The demo tenant with the demo story, placing drafts atomically.
    pub fn demo() -> Result<Self, ErpError> {
        Ok(Self::new(
            TenantId::parse(demo::TENANT).map_err(ErpError::internal)?,
            Books::demo(),
        ))
    }

    /// Tenant `tenant` holding `books`, placing drafts atomically.
    pub fn new(tenant: TenantId, books: Books) -> Self {
        Self {
            tenant,
            placing: Placing::Atomic,
            books: Arc::new(Mutex::new(books)),
        }
    }

    /// The same ERP placing drafts as `placing` says.
    pub fn placing(mut self, placing: Placing) -> Self {
        self.placing = placing;
        self
    }

    /// This ERP as the port the tools are built over.
    pub fn port(&self) -> Arc<dyn crate::port::Erp> {
        Arc::new(self.clone())
    }

    /// Reads the books.
    pub fn read<R>(&self, read: impl FnOnce(&Books) -> R) -> R {
        read(&lock(&self.books))
    }

    /// Changes the books (a test's setup).
    pub fn edit<R>(&self, edit: impl FnOnce(&mut Books) -> R) -> R {
        edit(&mut lock(&self.books))
    }

    /// Applies a write set this ERP prepared, as the server's one
    /// transaction would: all of it or, when a condition no longer holds
    /// (the number was taken, the draft was decided meanwhile), none of it.
    pub fn commit(&self, writes: WriteSet) -> Result<(), ErpError> {
        let mut books = lock(&self.books);
        let mut changed = books.clone();
        for write in &writes.0 {
            let key = write
                .key()
                .ok_or_else(|| ErpError::internal("a write without a key reached the in-memory ERP"))?;
            let mut parts = key.pk.splitn(3, '#');
            let (Some("MEMORY"), Some(branch), Some(prefix)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(ErpError::internal("a write of another store reached the in-memory ERP"));
            };
            match prefix {
                "PO" => apply::<PurchaseOrder>(&mut changed, branch, &key.sk, write)?,
                "QT" => apply::<Quote>(&mut changed, branch, &key.sk, write)?,
                _ => return Err(ErpError::internal("a write of another store reached the in-memory ERP")),
            }
        }
        *books = changed;
        Ok(())
    }

    /// Tool `tool`'s draft of `input`, placed as the server would place
    /// it (panics with the refusal when the tool refused).
    pub async fn drafted<T: DraftTool>(&self, tool: &T, call: &Call<'_>, input: T::Input) -> T::Output {
        match tool.draft(call, input).await {
            Ok(prepared) => match self.complete(prepared).await {
                Ok(output) => output,
                Err(err) => panic!("not placed: {err:?}"),
            },
            Err(err) => panic!("refused: {err:?}"),
        }
    }

    /// Why tool `tool` refused to draft `input` (panics when it prepared a
    /// draft; a prepared draft has no `Debug`, so no `unwrap_err`).
    pub async fn refusal<T: DraftTool>(&self, tool: &T, call: &Call<'_>, input: T::Input) -> ToolError {
        match tool.draft(call, input).await {
            Ok(_) => panic!("the draft was prepared"),
            Err(err) => err,
        }
    }

    /// What the server does with a prepared draft once its key is claimed:
    /// commits an atomic one; finds an external one by its key, else creates
    /// it; and answers with the tool's output.
    pub async fn complete<O>(&self, draft: Draft<O>) -> Result<O, ToolError> {
        match draft {
            Draft::Placed {
                placement: Placement::Atomic { document, writes },
                answer,
                ..
            } => {
                self.commit(writes)?;
                answer(&document)
            }
            Draft::Placed {
                placement: Placement::External(external),
                answer,
                ..
            } => {
                let created = match external.find().await? {
                    Some(created) => created,
                    None => external.create().await?,
                };
                answer(&created)
            }
            Draft::Existing { output, .. } => Ok(output),
        }
    }

    fn serves(&self, scope: &Scope<'_>) -> bool {
        scope.tenant == &self.tenant
    }

    fn books(&self) -> MutexGuard<'_, Books> {
        lock(&self.books)
    }

    /// A branch-scoped read: nothing for another tenant.
    fn scoped<T: Default>(&self, scope: &Scope<'_>, read: impl FnOnce(&Books, &str) -> T) -> T {
        if self.serves(scope) {
            read(&self.books(), scope.branch.as_str())
        } else {
            T::default()
        }
    }

    fn document<D: Filing>(&self, scope: &Scope<'_>, number: &str) -> Option<D> {
        self.scoped(scope, |books, branch| {
            D::shelf(books)
                .iter()
                .find(|f| f.branch == branch && f.document.identity().1 == number)
                .map(|f| f.document.clone())
        })
    }

    fn open_drafts_of<D: Filing>(&self, scope: &Scope<'_>, counterparty: &str, since: DateTime<Utc>) -> Vec<OpenDraft> {
        self.scoped(scope, |books, branch| {
            D::shelf(books)
                .iter()
                .filter(|f| f.branch == branch && f.open && f.document.status() == "draft")
                .filter(|f| f.document.counterparty() == counterparty)
                .filter(|f| DateTime::parse_from_rfc3339(f.document.identity().2).is_ok_and(|at| at >= since))
                .map(|f| OpenDraft {
                    key: f.key.clone(),
                    ..f.document.open_draft()
                })
                .collect()
        })
    }

    fn place<D: Filing>(
        &self,
        scope: &Scope<'_>,
        draft: D::Draft,
        draft_key: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Placement<Document>, ErpError> {
        if !self.serves(scope) {
            return Err(ErpError::internal(format!(
                "tenant {} is not the in-memory ERP's ({}); no draft was created",
                scope.tenant, self.tenant
            )));
        }
        let branch = scope.branch.as_str().to_owned();
        let created_at = rfc3339(now);
        match self.placing {
            Placing::Atomic => {
                let document: D = numbered(&mut self.books(), &branch, scope.branch_code, &draft, &created_at)?;
                let key = memory_key(&branch, D::KIND.prefix(), document.identity().1);
                let item = Attributes::from([
                    ("pk".to_owned(), Value::S(key.pk)),
                    ("sk".to_owned(), Value::S(key.sk)),
                    (
                        "document".to_owned(),
                        Value::S(serde_json::to_string(&document).map_err(ErpError::internal)?),
                    ),
                ]);
                Ok(Placement::Atomic {
                    document: document.into(),
                    writes: WriteSet(vec![Write::PutNew(item)]),
                })
            }
            Placing::External => {
                let key = draft_key.ok_or_else(|| {
                    ErpError::internal(
                        "an external draft needs its draftline key (Call::draft_key); no draft was created",
                    )
                })?;
                Ok(Placement::External(Box::new(MemoryDocument::<D> {
                    books: self.books.clone(),
                    branch,
                    branch_code: scope.branch_code.clone(),
                    key: key.to_owned(),
                    draft,
                    created_at,
                })))
            }
        }
    }

    fn decide<D: Filing>(
        &self,
        branch: &str,
        number: &str,
        decision: NewDecision,
    ) -> Result<DecisionPlacement, ErpError> {
        let not_found = || ErpError::NoSuchDraft {
            number: number.to_owned(),
        };
        let books = self.books();
        let filed = D::shelf(&books)
            .iter()
            .find(|f| f.branch == branch && f.document.identity().1 == number)
            .ok_or_else(not_found)?;
        let document = filed.document.document_ref();
        let earlier = decision.against(
            number,
            filed.document.status(),
            filed.document.decision(),
            filed.decision_id.as_deref(),
        )?;
        if let Some(earlier) = earlier {
            return Ok(DecisionPlacement::AlreadyRecorded {
                document,
                decision: earlier,
            });
        }
        if !filed.queued {
            return Err(ErpError::Refused(Refusal::NotDraftedHere {
                number: number.to_owned(),
            }));
        }
        // The built-in backend's condition: still an undecided draft.
        let mut update = Update::of(memory_key(branch, D::KIND.prefix(), number));
        update.set = vec![
            (
                "decision".to_owned(),
                Value::S(serde_json::to_string(&decision.decision).map_err(ErpError::internal)?),
            ),
            ("decision_id".to_owned(), Value::S(decision.decision_id)),
        ];
        update.condition = Some(Condition::All(vec![
            Condition::Equals("status".to_owned(), Value::s("draft")),
            Condition::Absent("decision_id".to_owned()),
        ]));
        Ok(DecisionPlacement::Atomic {
            document,
            writes: WriteSet(vec![Write::Update(update)]),
        })
    }
}

/// A draft placed externally: created in the books when the server asks.
struct MemoryDocument<D: Filing> {
    books: Arc<Mutex<Books>>,
    branch: String,
    branch_code: BranchCode,
    key: String,
    draft: D::Draft,
    created_at: String,
}

impl<D: Filing> MemoryDocument<D> {
    fn existing(&self, books: &Books) -> Option<Created> {
        D::shelf(books)
            .iter()
            .find(|f| f.key.as_deref() == Some(self.key.as_str()))
            .map(|f| f.document.created())
    }
}

#[async_trait]
impl<D: Filing> ExternalDocument for MemoryDocument<D> {
    async fn find(&self) -> Result<Option<Created>, ErpError> {
        Ok(self.existing(&lock(&self.books)))
    }

    async fn create(&self) -> Result<Created, ErpError> {
        let mut books = lock(&self.books);
        // The ERP keeps one document per key: a second create is the first document.
        if let Some(existing) = self.existing(&books) {
            return Ok(existing);
        }
        let document: D = numbered(
            &mut books,
            &self.branch,
            &self.branch_code,
            &self.draft,
            &self.created_at,
        )?;
        let answer = document.created();
        books.file(Filed {
            branch: self.branch.clone(),
            document,
            key: Some(self.key.clone()),
            queued: true,
            open: true,
            decision_id: None,
        })?;
        Ok(answer)
    }
}

fn by_branch<'a, T>(records: &'a [(String, T)], branch: &'a str) -> impl Iterator<Item = &'a T> + 'a {
    records.iter().filter(move |(b, _)| b == branch).map(|(_, r)| r)
}

fn levels_of(books: &Books, branch: &str, item: &str) -> Vec<StockLevel> {
    let mut levels: Vec<StockLevel> = by_branch(&books.stock, branch)
        .filter(|l| l.item == item)
        .cloned()
        .collect();
    levels.sort_by(|a, b| a.warehouse.cmp(&b.warehouse));
    levels
}

fn sorted_by<T, K: Ord>(records: impl Iterator<Item = T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut records: Vec<T> = records.collect();
    records.sort_by_key(|r| key(r));
    records
}

#[async_trait]
impl Inventory for MemoryErp {
    async fn item(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Item>, ErpError> {
        Ok(self.scoped(scope, |books, _| books.items.iter().find(|i| i.code == code).cloned()))
    }

    async fn items(&self, scope: &Scope<'_>, codes: &[String]) -> Result<HashMap<String, Item>, ErpError> {
        Ok(self.scoped(scope, |books, _| {
            books
                .items
                .iter()
                .filter(|i| codes.contains(&i.code))
                .map(|i| (i.code.clone(), i.clone()))
                .collect()
        }))
    }

    async fn item_stock(
        &self,
        scope: &Scope<'_>,
        item: &str,
    ) -> Result<(Vec<StockLevel>, Option<ReorderPolicy>), ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            let policy = by_branch(&books.policies, branch).find(|p| p.item == item).cloned();
            (levels_of(books, branch, item), policy)
        }))
    }

    async fn due_items(&self, scope: &Scope<'_>, after: Option<&str>, want: usize) -> Result<Page<DueItem>, ErpError> {
        let due: Vec<DueItem> = self.scoped(scope, |books, branch| {
            sorted_by(by_branch(&books.policies, branch), |p| p.item.clone())
                .into_iter()
                .filter(|p| after.is_none_or(|after| p.item.as_str() > after))
                .map(|policy| DueItem {
                    levels: levels_of(books, branch, &policy.item),
                    policy: policy.clone(),
                })
                .filter(|d| reorder::is_due(&d.policy, d.available()))
                .collect()
        });
        Ok(Page::first(due, want, |d| d.policy.item.clone()))
    }
}

#[async_trait]
impl Purchasing for MemoryErp {
    async fn vendor_with_prices(
        &self,
        scope: &Scope<'_>,
        code: &str,
    ) -> Result<Option<(Vendor, Vec<PriceEntry>)>, ErpError> {
        // Vendors are the tenant's: whether one supplies the branch is the tool's check.
        Ok(self.scoped(scope, |books, _| {
            let vendor = books.vendors.iter().find(|v| v.code == code)?.clone();
            let prices = sorted_by(books.prices.iter().filter(|p| p.vendor == code).cloned(), |p| {
                (p.item.clone(), p.uom.code())
            });
            Some((vendor, prices))
        }))
    }

    async fn vendor_prices(
        &self,
        scope: &Scope<'_>,
        wanted: &[(String, String, Uom)],
    ) -> Result<Vec<PriceEntry>, ErpError> {
        let wanted: BTreeSet<(&str, &str, Uom)> = wanted
            .iter()
            .map(|(vendor, item, uom)| (vendor.as_str(), item.as_str(), *uom))
            .collect();
        Ok(self.scoped(scope, |books, _| {
            books
                .prices
                .iter()
                .filter(|p| wanted.contains(&(p.vendor.as_str(), p.item.as_str(), p.uom)))
                .cloned()
                .collect()
        }))
    }

    async fn branch_vendors(&self, scope: &Scope<'_>) -> Result<Vec<BranchVendor>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(by_branch(&books.branch_vendors, branch).cloned(), |v| v.code.clone())
        }))
    }

    async fn items_and_branch_vendors(
        &self,
        scope: &Scope<'_>,
        items: &[String],
        vendors: &[String],
    ) -> Result<(HashMap<String, Item>, HashMap<String, BranchVendor>), ErpError> {
        let found_items = Inventory::items(self, scope, items).await?;
        let found_vendors = self.scoped(scope, |books, branch| {
            by_branch(&books.branch_vendors, branch)
                .filter(|v| vendors.contains(&v.code))
                .map(|v| (v.code.clone(), v.clone()))
                .collect()
        });
        Ok((found_items, found_vendors))
    }

    async fn purchase_order(&self, scope: &Scope<'_>, number: &str) -> Result<Option<PurchaseOrder>, ErpError> {
        Ok(self.document(scope, number))
    }

    async fn search_purchase_orders(
        &self,
        scope: &Scope<'_>,
        filter: &PoFilter,
        after: Option<&str>,
        limit: usize,
        max_pages: usize,
    ) -> Result<Page<PurchaseOrder>, ErpError> {
        // The built-in backend's order: by number as text, highest first.
        let mut candidates: Vec<PurchaseOrder> = self.scoped(scope, |books, branch| {
            books
                .purchase_orders
                .iter()
                .filter(|f| f.branch == branch)
                .filter(|f| after.is_none_or(|after| f.document.po_number.as_str() < after))
                .map(|f| f.document.clone())
                .collect()
        });
        candidates.sort_by(|a, b| b.po_number.cmp(&a.po_number));
        let from = filter.created_from.map(|d| d.to_string());
        let before = filter.created_to.map(|d| d.succ_opt().unwrap_or(d).to_string());
        let matches = |po: &PurchaseOrder| {
            filter.status.is_none_or(|s| po.status == s)
                && filter.vendor_code.as_ref().is_none_or(|v| po.vendor.code == *v)
                && from.as_ref().is_none_or(|from| po.created_at >= *from)
                && before.as_ref().is_none_or(|before| po.created_at < *before)
        };
        let mut found = Vec::new();
        let pages: Vec<&[PurchaseOrder]> = candidates.chunks(SEARCH_PAGE).collect();
        for (page_no, page) in pages.iter().enumerate() {
            found.extend(page.iter().filter(|po| matches(po)).cloned());
            if found.len() > limit {
                return Ok(Page::first(found, limit, |po| po.po_number.clone()));
            }
            let last_page = page_no.saturating_add(1) == pages.len();
            if !last_page && page_no.saturating_add(1) >= max_pages {
                // Out of budget: continue after the last order evaluated.
                let next_after = page.last().map(|po| po.po_number.clone());
                return Ok(Page {
                    items: found,
                    next_after,
                });
            }
        }
        Ok(Page {
            items: found,
            next_after: None,
        })
    }
}

#[async_trait]
impl Drafting for MemoryErp {
    async fn open_drafts(
        &self,
        scope: &Scope<'_>,
        kind: DocumentKind,
        counterparty: &str,
        since: DateTime<Utc>,
        // A decided draft is no longer open, whenever it was decided.
        _now: DateTime<Utc>,
    ) -> Result<Vec<OpenDraft>, ErpError> {
        Ok(match kind {
            DocumentKind::PurchaseOrder => self.open_drafts_of::<PurchaseOrder>(scope, counterparty, since),
            DocumentKind::Quote => self.open_drafts_of::<Quote>(scope, counterparty, since),
        })
    }

    async fn place_draft(
        &self,
        scope: &Scope<'_>,
        draft: NewDraft,
        draft_key: Option<&str>,
        _seen: Seen,
        now: DateTime<Utc>,
    ) -> Result<Placement<Document>, ErpError> {
        match draft {
            NewDraft::PurchaseOrder(draft) => self.place::<PurchaseOrder>(scope, draft, draft_key, now),
            NewDraft::Quote(draft) => self.place::<Quote>(scope, draft, draft_key, now),
        }
    }
}

#[async_trait]
impl Sales for MemoryErp {
    async fn customers(&self, scope: &Scope<'_>) -> Result<Vec<Customer>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(by_branch(&books.customers, branch).cloned(), |c| c.code.clone())
        }))
    }

    async fn customer(&self, scope: &Scope<'_>, code: &str) -> Result<Option<Customer>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            by_branch(&books.customers, branch).find(|c| c.code == code).cloned()
        }))
    }

    async fn customer_orders(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<SalesOrder>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(
                by_branch(&books.sales_orders, branch)
                    .filter(|o| o.customer == code)
                    .cloned(),
                |o| o.number.clone(),
            )
        }))
    }

    async fn customer_invoices(&self, scope: &Scope<'_>, code: &str) -> Result<Vec<CustomerInvoice>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(
                by_branch(&books.invoices, branch)
                    .filter(|i| i.customer == code)
                    .cloned(),
                |i| i.number.clone(),
            )
        }))
    }

    async fn list_prices(
        &self,
        scope: &Scope<'_>,
        list: &str,
        wanted: &[(String, Uom)],
    ) -> Result<Vec<ListPrice>, ErpError> {
        let wanted: BTreeSet<(&str, Uom)> = wanted.iter().map(|(item, uom)| (item.as_str(), *uom)).collect();
        Ok(self.scoped(scope, |books, _| {
            books
                .list_prices
                .iter()
                .filter(|p| p.list == list && wanted.contains(&(p.item.as_str(), p.uom)))
                .cloned()
                .collect()
        }))
    }

    async fn quote(&self, scope: &Scope<'_>, number: &str) -> Result<Option<Quote>, ErpError> {
        Ok(self.document(scope, number))
    }
}

#[async_trait]
impl Finance for MemoryErp {
    async fn tax_types(&self, scope: &Scope<'_>) -> Result<Vec<TaxType>, ErpError> {
        Ok(self.scoped(scope, |books, _| {
            sorted_by(books.tax_types.iter().cloned(), |t| t.code.code())
        }))
    }

    async fn receivables(&self, scope: &Scope<'_>) -> Result<Vec<CustomerInvoice>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(by_branch(&books.invoices, branch).cloned(), |i| {
                (i.customer.clone(), i.number.clone())
            })
        }))
    }

    async fn payables(&self, scope: &Scope<'_>) -> Result<Vec<VendorBill>, ErpError> {
        Ok(self.scoped(scope, |books, branch| {
            sorted_by(by_branch(&books.bills, branch).cloned(), |b| {
                (b.vendor.clone(), b.number.clone())
            })
        }))
    }
}

#[async_trait]
impl Review for MemoryErp {
    async fn agent_drafts(
        &self,
        scope: &Scope<'_>,
        filter: &DraftFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<AgentDraft>, ErpError> {
        fn entries<D: Filing>(books: &Books, branch: &str) -> Vec<(String, AgentDraft)> {
            D::shelf(books)
                .iter()
                .filter(|f| f.branch == branch && f.queued)
                .map(|f| {
                    let entry = f.document.queue_entry();
                    (queue_position(&entry.created_at, &entry.number), entry)
                })
                .collect()
        }
        let mut queue: Vec<(String, AgentDraft)> = self.scoped(scope, |books, branch| {
            let mut all = entries::<PurchaseOrder>(books, branch);
            all.extend(entries::<Quote>(books, branch));
            all
        });
        queue.retain(|(position, entry)| {
            after.is_none_or(|after| position.as_str() < after)
                && filter.kind.is_none_or(|kind| entry.kind == kind)
                && filter.status.as_ref().is_none_or(|status| entry.status == *status)
        });
        // Newest first.
        queue.sort_by(|a, b| b.0.cmp(&a.0));
        Ok(Page::first(queue, limit, |(position, _)| position.clone()).map(|(_, entry)| entry))
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
        if !self.serves(scope) {
            return Err(not_found());
        }
        match DocumentKind::of_number(number).ok_or_else(not_found)? {
            DocumentKind::PurchaseOrder => self.decide::<PurchaseOrder>(scope.branch.as_str(), number, decision),
            DocumentKind::Quote => self.decide::<Quote>(scope.branch.as_str(), number, decision),
        }
    }
}

/// The demo's today: the clock of every tool test (2026-11-29 09:00 UTC),
/// when the demo's invoices fall in every ageing bucket.
pub fn demo_now() -> Result<DateTime<Utc>, String> {
    Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0)
        .single()
        .ok_or_else(|| "2026-11-29T09:00:00Z is not one instant".to_owned())
}

/// The near-duplicate window the server uses by default.
pub const NEAR_DUPLICATE_WINDOW: Duration = Duration::from_secs(86_400);

/// The (path, message) of each issue of a validation error (panics on
/// any other error).
pub fn issues(err: &ToolError) -> Vec<(&str, &str)> {
    err.details()
        .unwrap_or_else(|| panic!("not a validation error: {err:?}"))
        .iter()
        .map(|i| (i.path.as_str(), i.message.as_str()))
        .collect()
}

/// Whom a test calls a tool for and with what: everything a [`Call`]
/// borrows, owned, so a test builds calls with [`TestCaller::call`] (and
/// struct update syntax for a draft key or a person's decision).
#[derive(Debug, Clone)]
pub struct TestCaller {
    /// The verified caller.
    pub caller: Caller,
    /// A clock standing at [`demo_now`] until a test moves it.
    pub clock: ManualClock,
    /// The agent run (`run-test`) and tool call (`call-test`) of the call.
    pub agent: AgentContext,
    /// The key cursors are sealed with.
    pub cursors: CursorKey,
    /// [`NEAR_DUPLICATE_WINDOW`] unless a test changes it.
    pub near_duplicate_window: Option<Duration>,
    /// `https://draftline.test/review`.
    pub review_pages: String,
}

impl TestCaller {
    /// Demo user `sub` (`buyer-sby`, `sales-bdg`, …) of the demo tenant.
    pub fn demo(sub: &str) -> Result<Self, String> {
        let user = demo::user(sub).ok_or_else(|| format!("{sub} is not a demo user"))?;
        Self::of(demo::TENANT, user.branch_id, user.branch_code, user.sub, user.scope)
    }

    /// User `sub` of `tenant`, in branch `branch` (printed `branch_code`), granted `scope`.
    pub fn of(tenant: &str, branch: &str, branch_code: &str, sub: &str, scope: &str) -> Result<Self, String> {
        let caller = Caller::from_verified(
            TenantId::parse(tenant)?,
            BranchId::parse(branch)?,
            BranchCode::parse(branch_code)?,
            UserId::parse(sub)?,
            Vec::new(),
            Scopes::from_claim(scope),
        );
        Ok(Self {
            caller,
            clock: ManualClock::new(demo_now()?),
            agent: AgentContext {
                run_id: Some("run-test".to_owned()),
                tool_call_id: Some("call-test".to_owned()),
                ..AgentContext::default()
            },
            cursors: CursorKey::from_secret(b"the in-memory ERP's tests seal cursors with this", "tests"),
            near_duplicate_window: Some(NEAR_DUPLICATE_WINDOW),
            review_pages: "https://draftline.test/review".to_owned(),
        })
    }

    /// A call with no draft key and no decision.
    pub fn call(&self) -> Call<'_> {
        Call {
            caller: &self.caller,
            clock: &self.clock,
            agent: &self.agent,
            request_id: "req-test",
            cursors: &self.cursors,
            draft_key: None,
            decision: None,
            near_duplicate_window: self.near_duplicate_window,
            review_pages: &self.review_pages,
            limits: &draftline_contract::policy::standing::NoPolicies,
            found: None,
        }
    }

    /// A draft call under `key`.
    pub fn draft<'a>(&'a self, key: &'a str) -> Call<'a> {
        Call {
            draft_key: Some(key),
            ..self.call()
        }
    }

    /// The caller's scope, for reading the port directly.
    pub fn scope(&self) -> Scope<'_> {
        Scope::of(&self.caller)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Decision, PoDraft, PoFields, Verdict};
    use draftline_contract::clock::Clock;

    fn approval(id: &str) -> NewDecision {
        NewDecision {
            decision: Decision {
                verdict: Verdict::Approved,
                reason: None,
                decided_by: "approver-sby".into(),
                decided_at: "2026-11-29T09:30:00.000Z".into(),
            },
            decision_id: id.into(),
        }
    }

    /// PO-SBY-000001's lines, drafted again.
    fn a_draft() -> PoDraft {
        let po = demo::agent_purchase_orders().remove(0).0;
        PoDraft {
            branch_id: po.branch_id,
            counterparty: po.vendor,
            currency: po.currency,
            lines: po.lines,
            subtotal: po.subtotal,
            total: po.total,
            note: None,
            client_ref: "r".into(),
            drafted_by_agent_run: Some("run-test".into()),
            drafted_on_behalf_of: "buyer-sby".into(),
            drafted_by_tool_call: None,
            own: PoFields {
                needed_by: po.needed_by,
            },
        }
    }

    /// `a_draft()` placed for `scope` under `key`.
    async fn place_po(
        erp: &MemoryErp,
        scope: &Scope<'_>,
        key: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Placement<PurchaseOrder>, ErpError> {
        erp.place_draft(scope, a_draft().into(), key, Seen::Unread, now)
            .await?
            .try_map(PurchaseOrder::try_from)
    }

    /// The refusal of a decision (placements have no `Debug`, so no `unwrap_err`).
    fn refusal(placed: Result<DecisionPlacement, ErpError>) -> String {
        match placed {
            Err(refused) => ToolError::from(refused).public_message(),
            Ok(_) => panic!("the decision was placed"),
        }
    }

    async fn placed(erp: &MemoryErp, who: &TestCaller) -> PurchaseOrder {
        let now = who.clock.now();
        match place_po(erp, &who.scope(), Some("k"), now).await.unwrap() {
            Placement::Atomic { document, writes } => {
                erp.commit(writes).unwrap();
                document
            }
            Placement::External(_) => panic!("the demo ERP places atomically"),
        }
    }

    #[tokio::test]
    async fn another_tenant_reads_nothing_and_cannot_place_a_draft() {
        let erp = MemoryErp::demo().unwrap();
        let stranger = TestCaller::of("acme", "SBY-01", "SBY", "buyer", "purchasing:read").unwrap();
        let scope = stranger.scope();
        assert_eq!(erp.item(&scope, "BRG-0042").await.unwrap(), None);
        assert!(erp.branch_vendors(&scope).await.unwrap().is_empty());
        assert_eq!(erp.purchase_order(&scope, "PO-SBY-000001").await.unwrap(), None);
        assert!(erp.tax_types(&scope).await.unwrap().is_empty());
        let now = stranger.clock.now();
        assert!(matches!(
            place_po(&erp, &scope, Some("k"), now).await,
            Err(ErpError::Internal(_))
        ));
        assert_eq!(erp.read(|b| b.purchase_orders.len()), 27);
    }

    #[tokio::test]
    async fn numbers_continue_after_each_branchs_seeded_documents() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("buyer-sby").unwrap();
        let jkt = TestCaller::demo("buyer-jkt").unwrap();
        let bdg = TestCaller::demo("sales-bdg").unwrap();
        assert_eq!(placed(&erp, &sby).await.po_number, "PO-SBY-000004");
        assert_eq!(placed(&erp, &sby).await.po_number, "PO-SBY-000005");
        assert_eq!(placed(&erp, &jkt).await.po_number, "PO-JKT-000025");
        assert_eq!(placed(&erp, &bdg).await.po_number, "PO-BDG-000001");
    }

    #[tokio::test]
    async fn a_placed_draft_is_written_only_by_its_commit_and_its_number_is_never_reused() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("buyer-sby").unwrap();
        let now = sby.clock.now();
        let Placement::Atomic { document, writes } = place_po(&erp, &sby.scope(), None, now).await.unwrap() else {
            panic!("atomic")
        };
        assert_eq!(document.po_number, "PO-SBY-000004");
        assert_eq!(erp.purchase_order(&sby.scope(), "PO-SBY-000004").await.unwrap(), None);
        // A draft placed meanwhile gets the next number; the first one's stays reserved.
        assert_eq!(placed(&erp, &sby).await.po_number, "PO-SBY-000005");
        erp.commit(writes).unwrap();
        let stored = erp
            .purchase_order(&sby.scope(), "PO-SBY-000004")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored, document);
    }

    #[tokio::test]
    async fn a_batch_whose_number_was_taken_meanwhile_writes_nothing() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("buyer-sby").unwrap();
        let now = sby.clock.now();
        let Placement::Atomic { writes, .. } = place_po(&erp, &sby.scope(), None, now).await.unwrap() else {
            panic!("atomic")
        };
        // The sequence set back by hand: the next placement gets the same number.
        erp.edit(|b| b.sequences.insert(("SBY-01".into(), "PO".into()), 3));
        placed(&erp, &sby).await;
        let before = erp.read(|b| b.purchase_orders.len());
        assert!(erp.commit(writes).is_err());
        assert_eq!(erp.read(|b| b.purchase_orders.len()), before);
    }

    #[tokio::test]
    async fn an_external_draft_is_numbered_when_created_and_one_key_makes_one_document() {
        let erp = MemoryErp::demo().unwrap().placing(Placing::External);
        let sby = TestCaller::demo("buyer-sby").unwrap();
        let now = sby.clock.now();
        let Placement::External(first) = place_po(&erp, &sby.scope(), Some("k1"), now).await.unwrap() else {
            panic!("external")
        };
        assert_eq!(first.find().await.unwrap(), None);
        let created = first.create().await.unwrap();
        assert_eq!(created.document.number, "PO-SBY-000004");
        assert_eq!(created.document.kind, "purchase_order");
        assert_eq!(first.find().await.unwrap(), Some(created.clone()));
        // Another worker with the same key: the same document, not a second one.
        let Placement::External(again) = place_po(&erp, &sby.scope(), Some("k1"), now).await.unwrap() else {
            panic!("external")
        };
        assert_eq!(again.create().await.unwrap(), created);
        assert_eq!(erp.read(|b| b.sequences[&("SBY-01".to_owned(), "PO".to_owned())]), 4);
        let open = erp
            .open_drafts(&sby.scope(), DocumentKind::PurchaseOrder, "V-00231", now, now)
            .await
            .unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].key.as_deref(), Some("k1"));
        // Without a key there is nothing to find it by: refused.
        assert!(place_po(&erp, &sby.scope(), None, now).await.is_err());
    }

    #[tokio::test]
    async fn a_decision_is_recorded_once_and_a_double_click_is_the_same_decision() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("approver-sby").unwrap();
        let DecisionPlacement::Atomic { document, writes } = erp
            .place_decision(&sby.scope(), "PO-SBY-000001", approval("d1"))
            .await
            .unwrap()
        else {
            panic!("atomic")
        };
        assert_eq!(document.number, "PO-SBY-000001");
        erp.commit(writes).unwrap();
        let po = erp
            .purchase_order(&sby.scope(), "PO-SBY-000001")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(po.status, crate::domain::PoStatus::Approved);
        assert_eq!(po.decision.as_ref().unwrap().decided_by, "approver-sby");
        match erp
            .place_decision(&sby.scope(), "PO-SBY-000001", approval("d1"))
            .await
            .unwrap()
        {
            DecisionPlacement::AlreadyRecorded { decision, .. } => assert_eq!(decision.verdict, Verdict::Approved),
            DecisionPlacement::Atomic { .. } => panic!("a double click is one decision"),
        }
        let other = erp.place_decision(&sby.scope(), "PO-SBY-000001", approval("d2")).await;
        assert!(refusal(other).contains("was already approved by approver-sby"));
    }

    #[tokio::test]
    async fn only_drafts_of_the_branch_drafted_through_draftline_are_decided_here() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("approver-sby").unwrap();
        let jkt = TestCaller::demo("buyer-jkt").unwrap();
        let decided = erp.place_decision(&sby.scope(), "PO-SBY-000003", approval("d")).await;
        assert!(refusal(decided).contains("already rejected"));
        let elsewhere = erp.place_decision(&sby.scope(), "PO-JKT-000001", approval("d")).await;
        assert!(matches!(elsewhere, Err(ErpError::NoSuchDraft { .. })));
        let by_hand = erp.place_decision(&jkt.scope(), "PO-JKT-000001", approval("d")).await;
        assert!(refusal(by_hand).contains("not drafted through draftline"));
        let sent = erp.place_decision(&jkt.scope(), "PO-JKT-000002", approval("d")).await;
        assert!(refusal(sent).contains("is sent, not a draft"));
    }

    #[tokio::test]
    async fn a_decided_draft_is_no_longer_an_open_draft() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("buyer-sby").unwrap();
        let po = placed(&erp, &sby).await;
        let since = sby.clock.now() - chrono::Duration::hours(24);
        let open = erp
            .open_drafts(
                &sby.scope(),
                DocumentKind::PurchaseOrder,
                "V-00231",
                since,
                sby.clock.now(),
            )
            .await
            .unwrap();
        assert_eq!(
            open.iter().map(|d| d.number.as_str()).collect::<Vec<_>>(),
            [po.po_number.as_str()]
        );
        assert_eq!(open[0].describe_lines(), "10 BOX of BRG-0042 and 12 PCS of VBT-0220");
        let DecisionPlacement::Atomic { writes, .. } = erp
            .place_decision(&sby.scope(), &po.po_number, approval("d"))
            .await
            .unwrap()
        else {
            panic!("atomic")
        };
        erp.commit(writes).unwrap();
        assert!(
            erp.open_drafts(
                &sby.scope(),
                DocumentKind::PurchaseOrder,
                "V-00231",
                since,
                sby.clock.now()
            )
            .await
            .unwrap()
            .is_empty()
        );
    }

    #[tokio::test]
    async fn the_review_queue_is_newest_first_filtered_and_continues_after_its_position() {
        let erp = MemoryErp::demo().unwrap();
        let sby = TestCaller::demo("approver-sby").unwrap();
        let all = DraftFilter::default();
        let first = erp.agent_drafts(&sby.scope(), &all, None, 2).await.unwrap();
        let numbers: Vec<&str> = first.items.iter().map(|d| d.number.as_str()).collect();
        assert_eq!(numbers, ["PO-SBY-000001", "PO-SBY-000002"]);
        let rest = erp
            .agent_drafts(&sby.scope(), &all, first.next_after.as_deref(), 2)
            .await
            .unwrap();
        assert_eq!(rest.items.len(), 1);
        assert_eq!(rest.items[0].number, "PO-SBY-000003");
        assert_eq!(rest.next_after, None);
        let rejected = DraftFilter {
            status: Some("rejected".into()),
            ..DraftFilter::default()
        };
        let only = erp.agent_drafts(&sby.scope(), &rejected, None, 10).await.unwrap();
        assert_eq!(only.items.len(), 1);
        assert_eq!(only.items[0].counterparty_code, "V-00415");
        // Jakarta's orders were drafted by hand: not in any queue.
        let jkt = TestCaller::demo("buyer-jkt").unwrap();
        assert!(
            erp.agent_drafts(&jkt.scope(), &all, None, 10)
                .await
                .unwrap()
                .items
                .is_empty()
        );
    }

    #[tokio::test]
    async fn a_search_out_of_page_budget_hands_back_the_last_order_it_evaluated() {
        let erp = MemoryErp::demo().unwrap();
        let jkt = TestCaller::demo("buyer-jkt").unwrap();
        // 24 seeded orders plus 400 more: three pages of the built-in backend.
        let extra: Vec<Filed<PurchaseOrder>> = (25..425)
            .map(|n| {
                let mut po = demo::jakarta_purchase_orders().remove(0);
                po.po_number = format!("PO-JKT-{n:06}");
                po.status = crate::domain::PoStatus::Sent;
                Filed::seeded("JKT-01", po, false)
            })
            .collect();
        erp.edit(|b| b.purchase_orders.extend(extra));
        let drafts = PoFilter {
            status: Some(crate::domain::PoStatus::Draft),
            ..PoFilter::default()
        };
        let page = erp
            .search_purchase_orders(&jkt.scope(), &drafts, None, 20, 1)
            .await
            .unwrap();
        assert!(page.items.is_empty());
        assert_eq!(page.next_after.as_deref(), Some("PO-JKT-000225"));
        let page = erp
            .search_purchase_orders(&jkt.scope(), &drafts, None, 20, 5)
            .await
            .unwrap();
        let numbers: Vec<&str> = page.items.iter().map(|po| po.po_number.as_str()).collect();
        assert_eq!(numbers, ["PO-JKT-000001"]);
        assert_eq!(page.next_after, None);
    }
}
