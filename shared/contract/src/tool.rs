//! What a tool is: its definition (name, title, description, tier, module,
//! scope, schemas, annotations) and its behaviour.
//!
//! A tool implements [`ToolSpec`] (the static facts and its Rust input and
//! output types) and one of [`ReadTool`] or [`DraftTool`]. The JSON Schemas
//! are derived from the same Rust types that deserialize and validate the
//! input, so the shape, the validation and the documentation cannot drift.
//! [`Registry`] erases the types so one pipeline can serve every tool.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::clock::Clock;
use crate::erp::ErpError;
use crate::error::{FieldIssue, ToolError};
use crate::identity::{Caller, Scopes};
use crate::request::AgentContext;
use crate::schema;
use crate::store::{Found, TableKey, WriteSet};
use crate::validation;

/// What a tool may do. Agents get nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Reads data of the caller's branch; writes nothing but the audit item.
    Read,
    /// Creates a document in status `draft`: no stock, ledger or vendor effect.
    Draft,
}

/// The static facts of a tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolMeta {
    /// `<module>_<verb>_<noun>`, matching `^[a-z][a-z0-9_]{0,63}$`.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// The intern-test description: what it does; conditions; what it
    /// returns; the sibling tool for nearby requests; one example call.
    pub description: &'static str,
    /// The module (namespace) the tool belongs to.
    pub module: &'static str,
    /// The scope a caller needs.
    pub scope: &'static str,
}

/// MCP tool annotations, derived from the tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// The tool changes nothing.
    pub read_only_hint: bool,
    /// The tool may destroy or overwrite data.
    pub destructive_hint: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent_hint: bool,
    /// The tool reaches outside the ERP.
    pub open_world_hint: bool,
}

impl Tier {
    /// The annotations every tool of this tier carries.
    pub fn annotations(self) -> Annotations {
        match self {
            Tier::Read => Annotations {
                read_only_hint: true,
                destructive_hint: false,
                idempotent_hint: true,
                open_world_hint: false,
            },
            Tier::Draft => Annotations {
                read_only_hint: false,
                destructive_hint: false,
                idempotent_hint: true,
                open_world_hint: false,
            },
        }
    }
}

/// A tool's full definition as published to callers.
#[derive(Debug, Clone, Serialize)]
pub struct ToolDefinition {
    /// `<module>_<verb>_<noun>`, unique in the registry and the function's path (`/api/<name>`).
    pub name: &'static str,
    /// A short human title (MCP `title`).
    pub title: &'static str,
    /// What a model reads to choose the tool: the intern test (DESIGN.md rule 8).
    pub description: &'static str,
    /// The namespace the tool belongs to (`purchasing`, …), one of [`ModuleMeta`].
    pub module: &'static str,
    /// Read or draft: what the tool may do at most.
    pub tier: Tier,
    /// Required scope.
    pub scope: &'static str,
    /// Strict JSON Schema of the input.
    pub input_schema: serde_json::Value,
    /// Strict JSON Schema of the output (`data`).
    pub output_schema: serde_json::Value,
    /// The MCP hints derived from the tier (read-only, idempotent, …).
    pub annotations: Annotations,
}

/// The module of the tools that read draftline's own records (the examiner
/// of the tenant's policy), not the ERP.
pub const AGENT_MODULE: &str = "agent";

impl ToolDefinition {
    /// Whether the tenant's per-tool rate counts this tool's calls. The rate
    /// bounds what agents ask of the ERP; the `agent` module's tools ask it
    /// nothing, and an agent refused its examiner could not plan the wait.
    pub fn counts_against_the_rate(&self) -> bool {
        self.module != AGENT_MODULE
    }
}

/// A module (namespace) and what it cannot do.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ModuleMeta {
    /// `purchasing`, `inventory`, …
    pub name: &'static str,
    /// What the module is for, and what it cannot do.
    pub description: &'static str,
}

/// Facts the cross-field rules of an input may depend on.
#[derive(Debug, Clone, Copy)]
pub struct RuleContext {
    /// Today, in the deployment's business calendar (UTC).
    pub today: NaiveDate,
}

/// The static side of a tool.
pub trait ToolSpec: Send + Sync + 'static {
    /// The input: deserialized strictly, validated, fingerprinted.
    type Input: DeserializeOwned + Serialize + Validate + JsonSchema + Clone + Send + Sync + 'static;
    /// The `data` of a successful response.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// Name, description, tier, scope, …
    const META: ToolMeta;

    /// Cross-field and date rules that `validator` cannot express
    /// (`needed_by` not in the past). Each problem names its JSON path.
    fn rules(_input: &Self::Input, _ctx: &RuleContext) -> Vec<FieldIssue> {
        Vec::new()
    }
}

/// Everything a tool may use while it runs.
pub struct Call<'a> {
    /// The verified caller.
    pub caller: &'a Caller,
    /// Now.
    pub clock: &'a dyn Clock,
    /// Which agent run and tool call this is.
    pub agent: &'a AgentContext,
    /// The request id minted at the edge (it names the call in the log and the audit).
    pub request_id: &'a str,
    /// The key that seals this deployment's pagination cursors.
    pub cursors: &'a crate::cursor::CursorKey,
    /// For a draft: the idempotency key as an external system stores it
    /// (`draftline_key`), opaque, unique per tenant and caller's key.
    pub draft_key: Option<&'a str>,
    /// For a draft: what a person decided about a near-duplicate, verified
    /// by the server against this very call (caller, tool, input, expiry).
    pub decision: Option<&'a Decision>,
    /// How far back a draft looks for an open agent draft of the same items
    /// before it asks a person (`None`: it does not look).
    pub near_duplicate_window: Option<std::time::Duration>,
    /// Where this deployment's review pages are (`<resource origin>/review`):
    /// a draft's answer links to the page where a person reviews it.
    pub review_pages: &'a str,
    /// What the tenant's policy still leaves the caller, read from the
    /// counters the draft path writes (the examiner tool asks it).
    pub limits: &'a dyn crate::policy::Examiner,
    /// For a draft: what the key lookup's batch found for the keys the tool
    /// asked it to read ([`DraftTool::reads`]), on the call's first
    /// preparation only (a draft prepared again reads afresh).
    pub found: Option<&'a Found>,
}

/// The review page of document `number` under `review_pages` (a call's
/// [`Call::review_pages`]): what a draft's answer and its events link to.
pub fn review_url(review_pages: &str, number: &str) -> String {
    format!("{}/documents/{number}", review_pages.trim_end_matches('/'))
}

/// What a person decided when a draft closely matched an open agent draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Create the new draft anyway.
    CreateAnother,
    /// Do not create anything; answer with the existing draft `number`.
    UseExisting(String),
}

/// A read tool.
#[async_trait]
pub trait ReadTool: ToolSpec {
    /// Reads, filtered by the caller's tenant and branch.
    async fn read(&self, call: &Call<'_>, input: Self::Input) -> Result<Self::Output, ToolError>;
}

/// The document a draft created, as data and text name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DocumentRef {
    /// The document's id (data).
    pub id: String,
    /// The human number (text: `PO-SBY-000124`).
    pub number: String,
    /// What kind of document (`purchase_order`, `quote`).
    pub kind: String,
}

/// A document created in another system (the ERP), as it came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The document as the ERP numbered it.
    pub document: DocumentRef,
    /// When the ERP recorded it (RFC 3339, UTC).
    pub created_at: String,
}

/// A document in another system (the ERP) that cannot share draftline's
/// transaction: the server runs the lease protocol around it. It claims
/// the key, asks [`find`](Self::find) whether an earlier worker already
/// created the document (it crashed before completing), else calls
/// [`create`](Self::create), then completes the key under its lease.
#[async_trait]
pub trait ExternalDocument: Send + Sync {
    /// The document this draft's key already created, if any.
    async fn find(&self) -> Result<Option<Created>, ErpError>;
    /// Creates the document in status draft, carrying the draft's key (the
    /// other system refuses a second document for one key).
    async fn create(&self) -> Result<Created, ErpError>;
}

/// How a checked draft becomes a document: what an ERP backend hands back
/// (`D`: its numbered document) and what a prepared [`Draft`] carries (`D`
/// = [`Created`]). The one placement type of the port and the contract.
pub enum Placement<D> {
    /// Numbered now; its writes commit in one transaction of draftline's
    /// table with the key record and the audit item.
    Atomic {
        /// The numbered document.
        document: D,
        /// Its writes (at most 93: the transaction limit is 100, and the key
        /// record, a person's answer, the audit item, the event that
        /// announces the draft and up to three limit counters share it).
        writes: WriteSet,
    },
    /// Created in the ERP under a lease, numbered by the ERP.
    External(Box<dyn ExternalDocument>),
}

impl<D> Placement<D> {
    /// The same placement of the document `convert`ed (an external one has
    /// none yet).
    pub fn try_map<E, F>(self, convert: impl FnOnce(D) -> Result<E, F>) -> Result<Placement<E>, F> {
        Ok(match self {
            Self::Atomic { document, writes } => Placement::Atomic {
                document: convert(document)?,
                writes,
            },
            Self::External(external) => Placement::External(external),
        })
    }
}

/// The tool's answer for the document its draft became, once it is
/// numbered and dated (by the transaction, or by the ERP).
pub type Answer<O> = Box<dyn FnOnce(&Created) -> Result<O, ToolError> + Send + Sync>;

/// What a draft commits the company to, as a tenant's policy weighs it
/// ([`crate::policy`]): its total and its counterparty. The server counts
/// the total against the run's and the day's budgets, in the draft's own
/// write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stakes {
    /// The document's total; `None` for a draft without one.
    pub total: Option<crate::policy::Amount>,
    /// The vendor or customer it is drafted for.
    pub counterparty: Option<Counterparty>,
}

/// Whom a draft is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterparty {
    /// A vendor (a purchase order) or a customer (a quote).
    pub kind: CounterpartyKind,
    /// Its code (`V-00231`).
    pub code: String,
}

/// The two kinds of counterparty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterpartyKind {
    /// A vendor.
    Vendor,
    /// A customer.
    Customer,
}

/// A prepared draft: the reads are done, every check passed, nothing is
/// written yet.
pub enum Draft<O> {
    /// A document is created where `placement` says, and `answer` is the
    /// tool's answer for it.
    Placed {
        /// Where and how the document is written.
        placement: Placement<Created>,
        /// The answer for the created document.
        answer: Answer<O>,
        /// What it commits the company to.
        stakes: Stakes,
    },
    /// Nothing is created: a person chose the existing document, which is
    /// the answer.
    Existing {
        /// The existing document.
        document: DocumentRef,
        /// Its data.
        output: O,
    },
}

/// A draft tool.
#[async_trait]
pub trait DraftTool: ToolSpec {
    /// The caller's own reference for this draft (part of the idempotency key
    /// when no `Idempotency-Key` header is sent).
    fn client_ref(input: &Self::Input) -> &str;

    /// The keys of draftline's table this draft will read, when its backend
    /// keeps its data there: the server reads them in the key lookup's one
    /// batch and hands what it found to [`DraftTool::draft`] in
    /// [`Call::found`]. `None` (the default): the draft reads for itself.
    fn reads(&self, _call: &Call<'_>, _input: &Self::Input) -> Option<Vec<TableKey>> {
        None
    }

    /// Does the reads and the checks and prepares the document. Must not
    /// write anything itself.
    async fn draft(&self, call: &Call<'_>, input: Self::Input) -> Result<Draft<Self::Output>, ToolError>;
}

/// A parsed and validated input, type-erased.
pub struct ParsedInput {
    /// The validated input re-serialized (what the fingerprint is taken of).
    pub canonical: serde_json::Value,
    typed: Box<dyn Any + Send + Sync>,
}

/// What every registered tool answers, whatever its tier.
#[async_trait]
pub trait ErasedTool: Send + Sync {
    /// What the tool is, as lists and the pipeline show it.
    fn definition(&self) -> &ToolDefinition;
    /// Deserializes and validates `body` against the schema and the
    /// `validator` rules; nothing that depends on the clock.
    fn parse(&self, body: &[u8]) -> Result<ParsedInput, ToolError>;
    /// The rules that depend on when the call is made ([`ToolSpec::rules`]).
    /// Draft tools run them only after the idempotency lookup, so a replay
    /// always wins over a rule that has since become false.
    fn check_rules(&self, input: &ParsedInput, ctx: &RuleContext) -> Result<(), ToolError>;
}

/// A read tool with its types erased.
#[async_trait]
pub trait ErasedRead: ErasedTool {
    /// Reads.
    async fn read(&self, call: &Call<'_>, input: &ParsedInput) -> Result<serde_json::Value, ToolError>;
}

/// A draft tool with its types erased.
#[async_trait]
pub trait ErasedDraft: ErasedTool {
    /// The input's `client_ref`.
    fn client_ref<'a>(&self, input: &'a ParsedInput) -> Result<&'a str, ToolError>;
    /// The keys the draft reads, for the key lookup's batch ([`DraftTool::reads`]).
    fn reads(&self, call: &Call<'_>, input: &ParsedInput) -> Option<Vec<TableKey>>;
    /// Reads and prepares the writes; writes nothing.
    async fn prepare(&self, call: &Call<'_>, input: &ParsedInput) -> Result<Draft<serde_json::Value>, ToolError>;
}

fn definition_of<T: ToolSpec>(tier: Tier) -> ToolDefinition {
    let meta = T::META;
    ToolDefinition {
        name: meta.name,
        title: meta.title,
        description: meta.description,
        module: meta.module,
        tier,
        scope: meta.scope,
        input_schema: schema::strict_schema_for::<T::Input>(),
        output_schema: schema::strict_schema_for::<T::Output>(),
        annotations: tier.annotations(),
    }
}

fn not_happened(tier: Tier) -> &'static str {
    match tier {
        Tier::Read => "Nothing was read or changed.",
        Tier::Draft => "No draft was created.",
    }
}

fn parse_typed<T: ToolSpec>(body: &[u8], tier: Tier) -> Result<ParsedInput, ToolError> {
    let input: T::Input =
        validation::parse_and_validate(body).map_err(|issues| validation::rejected_with(issues, not_happened(tier)))?;
    let canonical = serde_json::to_value(&input).map_err(ToolError::internal)?;
    Ok(ParsedInput {
        canonical,
        typed: Box::new(input),
    })
}

fn typed<T: ToolSpec>(input: &ParsedInput) -> Result<&T::Input, ToolError> {
    input
        .typed
        .downcast_ref::<T::Input>()
        .ok_or_else(|| ToolError::internal("input parsed by another tool"))
}

fn check_typed<T: ToolSpec>(input: &ParsedInput, ctx: &RuleContext, tier: Tier) -> Result<(), ToolError> {
    let issues = T::rules(typed::<T>(input)?, ctx);
    if issues.is_empty() {
        Ok(())
    } else {
        Err(validation::rejected_with(issues, not_happened(tier)))
    }
}

struct ReadAdapter<T: ReadTool> {
    tool: T,
    definition: ToolDefinition,
}

#[async_trait]
impl<T: ReadTool> ErasedTool for ReadAdapter<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse(&self, body: &[u8]) -> Result<ParsedInput, ToolError> {
        parse_typed::<T>(body, Tier::Read)
    }

    fn check_rules(&self, input: &ParsedInput, ctx: &RuleContext) -> Result<(), ToolError> {
        check_typed::<T>(input, ctx, Tier::Read)
    }
}

#[async_trait]
impl<T: ReadTool> ErasedRead for ReadAdapter<T> {
    async fn read(&self, call: &Call<'_>, input: &ParsedInput) -> Result<serde_json::Value, ToolError> {
        let output = self.tool.read(call, typed::<T>(input)?.clone()).await?;
        serde_json::to_value(output).map_err(ToolError::internal)
    }
}

struct DraftAdapter<T: DraftTool> {
    tool: T,
    definition: ToolDefinition,
}

#[async_trait]
impl<T: DraftTool> ErasedTool for DraftAdapter<T> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse(&self, body: &[u8]) -> Result<ParsedInput, ToolError> {
        parse_typed::<T>(body, Tier::Draft)
    }

    fn check_rules(&self, input: &ParsedInput, ctx: &RuleContext) -> Result<(), ToolError> {
        check_typed::<T>(input, ctx, Tier::Draft)
    }
}

#[async_trait]
impl<T: DraftTool> ErasedDraft for DraftAdapter<T> {
    fn client_ref<'a>(&self, input: &'a ParsedInput) -> Result<&'a str, ToolError> {
        Ok(T::client_ref(typed::<T>(input)?))
    }

    fn reads(&self, call: &Call<'_>, input: &ParsedInput) -> Option<Vec<TableKey>> {
        self.tool.reads(call, typed::<T>(input).ok()?)
    }

    async fn prepare(&self, call: &Call<'_>, input: &ParsedInput) -> Result<Draft<serde_json::Value>, ToolError> {
        Ok(match self.tool.draft(call, typed::<T>(input)?.clone()).await? {
            // The answer as JSON: the tool's own, serialized.
            Draft::Placed {
                placement,
                answer,
                stakes,
            } => Draft::Placed {
                placement,
                answer: Box::new(move |created| serde_json::to_value(answer(created)?).map_err(ToolError::internal)),
                stakes,
            },
            Draft::Existing { document, output } => Draft::Existing {
                document,
                output: serde_json::to_value(output).map_err(ToolError::internal)?,
            },
        })
    }
}

/// A registered tool: its tier is the variant (agents get nothing else).
#[derive(Clone)]
pub enum Registered {
    /// A read tool.
    Read(Arc<dyn ErasedRead>),
    /// A draft tool.
    Draft(Arc<dyn ErasedDraft>),
}

impl Registered {
    /// The definition.
    pub fn definition(&self) -> &ToolDefinition {
        match self {
            Self::Read(tool) => tool.definition(),
            Self::Draft(tool) => tool.definition(),
        }
    }

    /// The tier.
    pub fn tier(&self) -> Tier {
        match self {
            Self::Read(_) => Tier::Read,
            Self::Draft(_) => Tier::Draft,
        }
    }

    /// The tier-independent side.
    pub fn erased(&self) -> &dyn ErasedTool {
        match self {
            Self::Read(tool) => tool.as_ref(),
            Self::Draft(tool) => tool.as_ref(),
        }
    }
}

/// Every tool of a deployment, sorted by name, and the modules they live in.
/// A tool is registered with its code (it is served), or listed by its
/// definition alone (a function that only lists tools links none of their
/// code: [`Registry::listed`]).
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Registered>,
    listed: Vec<ToolDefinition>,
    modules: Vec<ModuleMeta>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.definition().name))
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a module description.
    pub fn module(mut self, module: ModuleMeta) -> Self {
        self.modules.push(module);
        self.modules.sort_by_key(|m| m.name);
        self
    }

    /// Adds a read tool.
    pub fn read<T: ReadTool>(self, tool: T) -> Self {
        self.add(Registered::Read(Arc::new(ReadAdapter {
            tool,
            definition: definition_of::<T>(Tier::Read),
        })))
    }

    /// Adds a draft tool.
    pub fn draft<T: DraftTool>(self, tool: T) -> Self {
        self.add(Registered::Draft(Arc::new(DraftAdapter {
            tool,
            definition: definition_of::<T>(Tier::Draft),
        })))
    }

    /// Adds tool `T`'s definition alone, in `tier`: listed, never served
    /// ([`Registry::get`] does not find it).
    pub fn listed<T: ToolSpec>(mut self, tier: Tier) -> Self {
        self.listed.push(definition_of::<T>(tier));
        self.listed.sort_by_key(|d| d.name);
        self
    }

    fn add(mut self, tool: Registered) -> Self {
        self.tools.push(tool);
        self.tools.sort_by_key(|t| t.definition().name);
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Registered> {
        self.tools
            .binary_search_by_key(&name, |t| t.definition().name)
            .ok()
            .map(|i| &self.tools[i])
    }

    /// Every tool, served or listed, sorted by name.
    pub fn all(&self) -> impl Iterator<Item = &ToolDefinition> {
        // Two lists, each sorted by name: merged.
        let mut served = self.tools.iter().map(Registered::definition).peekable();
        let mut listed = self.listed.iter().peekable();
        std::iter::from_fn(move || match (served.peek(), listed.peek()) {
            (Some(a), Some(b)) if b.name < a.name => listed.next(),
            (Some(_), _) => served.next(),
            (None, _) => listed.next(),
        })
    }

    /// The tools `scopes` allow, sorted by name.
    pub fn visible_to<'a>(&'a self, scopes: &'a Scopes) -> impl Iterator<Item = &'a ToolDefinition> + 'a {
        self.all().filter(move |d| scopes.grants(d.scope))
    }

    /// The modules, sorted by name.
    pub fn modules(&self) -> &[ModuleMeta] {
        &self.modules
    }
}
