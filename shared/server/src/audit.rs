//! The audit record every call leaves (DESIGN.md rule 7): which agent run and
//! tool call, on behalf of whom, with which model and prompt, what happened.
//!
//! A record is a function of the call ([`CallFacts`]: what arrived) and its
//! [`Outcome`]; it is built once, when the outcome is known (for a draft,
//! the anticipated outcome goes into the draft's own transaction).
//!
//! Items live under `T#<tenant>#RUN#<run id>` (one partition per agent run,
//! `none` for calls without a run id), sorted by time; calls that touch a
//! document are also findable by it through `gsi1` (`T#<tenant>#DOC#<id>`).
//! Every item has its own id (a ULID minted for it) in its sort key and is
//! written under `attribute_not_exists(pk)`: a repeated `X-Request-Id` or a
//! second record of a call that timed out adds an item, never replaces one.
//!
//! Calls refused before anyone was identified have no trusted tenant: they
//! are not written here but counted in [`crate::anonymous`]'s bounded trace.

use chrono::{DateTime, SecondsFormat, Utc};

use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::identity::{Caller, TenantId};
use draftline_contract::request::AgentContext;
use draftline_contract::store::{Attributes, Value, Write};
use draftline_contract::tool::DocumentRef;

use crate::edge::trace::{self, Stage, TraceContext};
use crate::storage::Table;

/// What became of a call, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeKind {
    /// The tool did its work (read returned, draft created).
    Ok,
    /// The call failed: invalid input, not found, conflict, dependency, bug.
    ToolError,
    /// Authentication or authorization refused it.
    Denied,
    /// A stored response was sent again.
    Replayed,
    /// A person must decide first; nothing was created.
    InputRequired,
}

impl OutcomeKind {
    /// The outcome as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Denied => "denied",
            Self::Replayed => "replayed",
            Self::InputRequired => "input_required",
        }
    }
}

/// What arrived: the facts of a call known before it runs.
#[derive(Debug, Clone)]
pub struct CallFacts {
    /// The request id (minted once at the edge).
    pub request_id: String,
    /// When the call arrived.
    pub at: DateTime<Utc>,
    /// The tool asked for (at most 64 characters of it).
    pub tool: String,
    /// How the call arrived (`http`, `mcp`).
    pub transport: &'static str,
    /// The executor's headers, as far as they were readable.
    pub agent: AgentContext,
    /// The arguments as they arrived, bounded ([`stored_arguments`]), so a
    /// reviewer can read what the agent asked for; `None` for no body.
    pub arguments: Option<StoredArguments>,
    /// The W3C trace id the call belongs to (32 hex digits); `None` for
    /// what no agent's trace reaches (a person's decision, the seed).
    pub trace_id: Option<String>,
}

impl CallFacts {
    /// The facts of a call of `tool` that arrived at `at` by `transport`
    /// in `trace`, with `body` as its arguments, and no agent headers.
    pub fn arrived(
        request_id: &str,
        at: DateTime<Utc>,
        tool: &str,
        transport: &'static str,
        trace: &TraceContext,
        body: Option<&[u8]>,
    ) -> Self {
        Self {
            request_id: request_id.to_owned(),
            at,
            tool: tool.chars().take(64).collect(),
            transport,
            agent: AgentContext::default(),
            arguments: body.and_then(stored_arguments),
            trace_id: Some(trace.trace_id()),
        }
    }
}

/// The most of a call's arguments an audit item keeps, in bytes.
pub const MAX_STORED_ARGUMENTS: usize = 4096;

/// A bounded copy of a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredArguments {
    /// The text (UTF-8; invalid bytes replaced), at most [`MAX_STORED_ARGUMENTS`] bytes.
    pub text: String,
    /// Whether the body was longer and was cut.
    pub truncated: bool,
}

/// The arguments an audit item keeps of `body`: the body as sent, cut at
/// [`MAX_STORED_ARGUMENTS`] bytes (on a character boundary); `None` when
/// the body is empty. They are stored as text, never interpreted: the
/// review pages show them escaped.
pub fn stored_arguments(body: &[u8]) -> Option<StoredArguments> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let text = String::from_utf8_lossy(body);
    let truncated = text.len() > MAX_STORED_ARGUMENTS;
    let mut end = text.len().min(MAX_STORED_ARGUMENTS);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(StoredArguments {
        text: text[..end].to_owned(),
        truncated,
    })
}

/// The idempotency facts of a draft call, once its key is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFacts {
    /// The key as the caller knows it.
    pub key: String,
    /// The fingerprint of tool + input.
    pub fingerprint: String,
    /// The person's answer the call carried, once checked against it.
    pub answered: Option<Answered>,
}

/// A person's checked answer to a near-duplicate question, as the audit
/// keeps it: the review pages mark a draft created through one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// `create_another` or `use_existing`.
    pub decision: &'static str,
    /// The open draft the question was about (`PO-SBY-000004`).
    pub existing: String,
}

/// How a call ended, as the audit needs it.
#[derive(Debug, Clone)]
pub struct Outcome<'a> {
    /// The stored outcome.
    pub kind: OutcomeKind,
    /// The HTTP status answered.
    pub http_status: u16,
    /// The error code, if any.
    pub code: Option<&'static str>,
    /// The model-readable message of an error, if any (what the caller was told).
    pub message: Option<String>,
    /// The document created or replayed.
    pub document: Option<&'a DocumentRef>,
    /// The draft's key facts.
    pub key: Option<&'a KeyFacts>,
    /// Whether the call passed authentication and the scope check (its
    /// agent headers describe a call its caller was allowed to make; the
    /// run page's header card is read from such calls only).
    pub authorized: bool,
}

/// One call's audit item, built once.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    id: String,
    item: Attributes,
}

impl AuditRecord {
    /// The record of an identified caller's call with `outcome`.
    pub fn new(facts: &CallFacts, caller: &Caller, outcome: &Outcome<'_>) -> Self {
        Self::with_id(ulid::Ulid::new().to_string(), facts, caller, outcome)
    }

    /// The record with a given item id (a ULID): for items written again
    /// and again that must stay one item, such as the demo trail a seed
    /// writes at every start. Calls always get a fresh id ([`Self::new`]).
    pub fn with_id(id: String, facts: &CallFacts, caller: &Caller, outcome: &Outcome<'_>) -> Self {
        let s = |v: &str| Value::s(v);
        let at = facts.at.to_rfc3339_opts(SecondsFormat::Millis, true);
        let tenant = caller.tenant().as_str();
        let sk = format!("AUDIT#{at}#{id}");
        let pk = run_partition(caller.tenant(), facts.agent.run_id.as_deref().unwrap_or("none"));
        let mut item = Attributes::from([
            ("pk".to_owned(), s(&pk)),
            ("sk".to_owned(), s(&sk)),
            ("kind".to_owned(), s("audit")),
            ("audit_id".to_owned(), s(&id)),
            ("request_id".to_owned(), s(&facts.request_id)),
            ("at".to_owned(), s(&at)),
            (attr::TOOL.to_owned(), s(&facts.tool)),
            ("transport".to_owned(), s(facts.transport)),
            ("outcome".to_owned(), s(outcome.kind.as_str())),
            ("http_status".to_owned(), Value::n(i64::from(outcome.http_status))),
            ("tenant_id".to_owned(), s(tenant)),
            (attr::BRANCH.to_owned(), s(caller.branch().as_str())),
            ("on_behalf_of".to_owned(), s(caller.user().as_str())),
            ("scopes".to_owned(), s(&caller.scopes().to_string())),
        ]);
        let mut opt = |name: &str, value: Option<&str>| {
            if let Some(v) = value {
                item.insert(name.to_owned(), s(v));
            }
        };
        opt("code", outcome.code);
        opt("trace_id", facts.trace_id.as_deref());
        opt("error_message", outcome.message.as_deref());
        opt("agent_run_id", facts.agent.run_id.as_deref());
        opt("tool_call_id", facts.agent.tool_call_id.as_deref());
        opt("model", facts.agent.model.as_deref());
        opt("prompt_version", facts.agent.prompt_version.as_deref());
        opt("approval", facts.agent.approval.map(|a| a.as_str()));
        opt("approval_reason", facts.agent.approval_reason.as_deref());
        opt("idempotency_key", outcome.key.map(|k| k.key.as_str()));
        opt("fingerprint", outcome.key.map(|k| k.fingerprint.as_str()));
        let answered = outcome.key.and_then(|k| k.answered.as_ref());
        opt("confirmed", answered.map(|a| a.decision));
        opt("near_duplicate_of", answered.map(|a| a.existing.as_str()));

        if let Some(arguments) = &facts.arguments {
            opt("arguments", Some(&arguments.text));
            if arguments.truncated {
                opt("arguments_truncated", Some("true"));
            }
        }
        if let Some(doc) = outcome.document {
            opt("document_id", Some(&doc.id));
            opt("document_number", Some(&doc.number));
            opt(attr::DOCUMENT_KIND, Some(&doc.kind));
            opt(
                attr::DOCUMENT_PARTITION,
                Some(&document_partition(caller.tenant(), &doc.id)),
            );
            opt(attr::DOCUMENT_SORT, Some(&sk));
        }
        if outcome.authorized {
            item.insert("authorized".to_owned(), Value::Bool(true));
        }
        // Where the call's time went until this item was made (a draft's
        // own transaction, which writes it, is not in it yet).
        if let Some((recorded, elapsed)) = trace::current() {
            let us = |spent: std::time::Duration| Value::N(spent.as_micros().to_string());
            let stages = recorded
                .stages
                .iter()
                .map(|(stage, spent)| (stage.as_str().to_owned(), us(spent)))
                .collect();
            item.insert(attr::STAGES_US.to_owned(), Value::M(stages));
            item.insert(attr::ELAPSED_US.to_owned(), us(elapsed));
        }
        Self { id, item }
    }

    /// This record, noting the version of the tenant's policy the call was
    /// held to.
    pub fn under_policy(mut self, version: u64) -> Self {
        self.item
            .insert("policy_version".to_owned(), Value::N(version.to_string()));
        self
    }

    /// This record, noting the limits of the tenant's policy the call
    /// reached: the one that refused it (`observed: false`), or every one
    /// observe mode let it pass although it would have refused it
    /// (`observed: true`). The first is kept in the `limit_*` attributes,
    /// all of them in `limits` (a list of maps with the same fields).
    pub fn reaching(mut self, limits: &[ReachedLimit], observed: bool) -> Self {
        let Some(limit) = limits.first() else {
            return self;
        };
        let s = |v: &str| Value::s(v);
        let fields = |limit: &ReachedLimit| -> Attributes {
            [
                ("name", Some(limit.name.as_str())),
                ("unit", Some(&limit.unit)),
                ("applies_to", Some(&limit.applies_to)),
                ("max", limit.max.as_deref()),
                ("used", limit.used.as_deref()),
                ("this_call", Some(&limit.this_call)),
            ]
            .into_iter()
            .filter_map(|(name, value)| Some((name.to_owned(), s(value?))))
            .collect()
        };
        // The first also in the flat attributes, as items kept it before.
        for (field, value) in fields(limit) {
            self.item.insert(flat_attribute(&field), value);
        }
        self.item.insert(
            attr::LIMITS.to_owned(),
            Value::L(limits.iter().map(|l| Value::M(fields(l))).collect()),
        );
        self.item
            .insert("limit_mode".to_owned(), s(if observed { "observe" } else { "enforce" }));
        if observed {
            self.item
                .insert("would_have_been_refused".to_owned(), Value::Bool(true));
        }
        self.under_policy(limit.policy_version)
    }

    /// The item's sort key (`AUDIT#<time>#<audit id>`).
    pub fn sort_key(&self) -> Option<&str> {
        self.item.get("sk").and_then(Value::as_s)
    }

    /// This item's own id (unique per item, not per request).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The item's attributes.
    pub fn item(&self) -> &Attributes {
        &self.item
    }

    /// The write of this record in a transaction (append-only).
    pub fn put(&self) -> Write {
        Write::PutNew(self.item.clone())
    }

    /// Writes this record (append-only); records written at the same time
    /// on this instance may share one request ([`Table::append`]).
    pub async fn write(self, table: &dyn Table) -> Result<(), ToolError> {
        table
            .append(self.item, "The call could not be recorded, so its result was withheld.")
            .await
    }
}

/// The index that finds audit items by document.
pub const DOCUMENT_INDEX: &str = "gsi1";

/// The attributes a reader filters audit items by.
pub mod attr {
    /// The tool called (or `review.approve`, `review.reject`).
    pub const TOOL: &str = "tool";
    /// The caller's branch.
    pub const BRANCH: &str = "branch_id";
    /// The kind of the document the call touched.
    pub const DOCUMENT_KIND: &str = "document_kind";
    /// The partition key of [`super::DOCUMENT_INDEX`].
    pub const DOCUMENT_PARTITION: &str = "gsi1pk";
    /// The sort key of [`super::DOCUMENT_INDEX`].
    pub const DOCUMENT_SORT: &str = "gsi1sk";
    /// Where the call's time went, per stage, in microseconds (a map).
    pub const STAGES_US: &str = "stages_us";
    /// The call's time until its item was made, in microseconds.
    pub const ELAPSED_US: &str = "elapsed_us";
    /// The limit of the tenant's policy the call reached (a reserved word
    /// in DynamoDB expressions: name it through a placeholder).
    pub const LIMIT: &str = "limit";
    /// Every limit the call reached (a list of maps).
    pub const LIMITS: &str = "limits";
}

/// The partition of agent run `run`'s audit items (`none`: calls without a run id).
pub fn run_partition(tenant: &TenantId, run: &str) -> String {
    format!("T#{tenant}#RUN#{run}")
}

/// The partition of document `id`'s audit items in [`DOCUMENT_INDEX`].
pub fn document_partition(tenant: &TenantId, id: &str) -> String {
    format!("T#{tenant}#DOC#{id}")
}

/// One tool call (or decision) as the audit recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCall {
    /// The item's sort key (`AUDIT#<time>#<id>`): its position in the run.
    pub position: String,
    /// When (RFC 3339).
    pub at: String,
    /// The tool (or `review.approve`, `review.reject`).
    pub tool: String,
    /// `http`, `mcp` or `browser`.
    pub transport: String,
    /// `ok`, `denied`, `tool_error`, `replayed`, `input_required`.
    pub outcome: String,
    /// The HTTP status answered.
    pub http_status: String,
    /// The error code, if any.
    pub code: Option<String>,
    /// The model-readable error text the caller got.
    pub error_message: Option<String>,
    /// The person it acted for (or who decided).
    pub on_behalf_of: String,
    /// The agent run.
    pub agent_run_id: Option<String>,
    /// The executor's tool-call id.
    pub tool_call_id: Option<String>,
    pub model: Option<String>,
    pub prompt_version: Option<String>,
    /// What the executor said a person approved.
    pub approval: Option<String>,
    /// The document produced or touched: number and kind.
    pub document: Option<(String, String)>,
    /// The arguments as stored (bounded), and whether they were cut.
    pub arguments: Option<(String, bool)>,
    pub request_id: String,
    /// Whether the call passed authentication and the scope check;
    /// `None` for items written before the audit said so.
    pub authorized: Option<bool>,
    /// The person's answer to a near-duplicate question the call carried
    /// (`create_another`, `use_existing`), and the open draft it was about.
    pub confirmed: Option<(String, String)>,
    /// The W3C trace id of the call.
    pub trace_id: Option<String>,
    /// Where the call's time went until its item was made, in microseconds:
    /// each stage (`auth`, `validation`, `idempotency`, `erp`, `audit`) in
    /// order, and the whole; `None` for items written before the audit
    /// kept them (and for a person's decision).
    pub timing: Option<Timing>,
    /// The limits of the tenant's policy the call reached, as its audit
    /// item keeps them ([`AuditRecord::reaching`]; without the reset time,
    /// which the item does not keep): the one that refused it, or each one
    /// observe mode let it pass. Empty when it reached none.
    pub limits: Vec<ReachedLimit>,
    /// Whether observe mode let the call pass the `limits` (else the first
    /// refused it).
    pub limits_observed: bool,
}

/// A call's time as its audit item keeps it, in microseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    /// Each stage with its time, in the order a call passes them.
    pub stages: Vec<(&'static str, u64)>,
    /// The whole call until the item was made.
    pub elapsed: u64,
}

impl StoredCall {
    /// Reads an audit item.
    pub fn from_item(item: &Attributes) -> Self {
        let s = |name: &str| item.get(name).and_then(Value::as_s).map(str::to_owned);
        let n = |name: &str| item.get(name).and_then(Value::as_n).map(str::to_owned);
        Self {
            position: s("sk").unwrap_or_default(),
            at: s("at").unwrap_or_default(),
            tool: s("tool").unwrap_or_default(),
            transport: s("transport").unwrap_or_default(),
            outcome: s("outcome").unwrap_or_default(),
            http_status: n("http_status").unwrap_or_default(),
            code: s("code"),
            error_message: s("error_message"),
            on_behalf_of: s("on_behalf_of").unwrap_or_default(),
            agent_run_id: s("agent_run_id"),
            tool_call_id: s("tool_call_id"),
            model: s("model"),
            prompt_version: s("prompt_version"),
            approval: s("approval"),
            document: s("document_number").map(|number| (number, s("document_kind").unwrap_or_default())),
            arguments: s("arguments").map(|a| (a, s("arguments_truncated").is_some())),
            request_id: s("request_id").unwrap_or_default(),
            authorized: item.get("authorized").and_then(Value::as_bool),
            confirmed: s("confirmed").map(|decision| (decision, s("near_duplicate_of").unwrap_or_default())),
            trace_id: s("trace_id"),
            timing: timing_of(item),
            limits: limits_of(item),
            limits_observed: s("limit_mode").as_deref() == Some("observe"),
        }
    }

    /// Whether the call was made by a caller allowed to make it: it passed
    /// authentication and the scope check. Items from before the audit
    /// recorded that count when their outcome shows the tool ran.
    pub fn was_authorized(&self) -> bool {
        self.authorized
            .unwrap_or(matches!(self.outcome.as_str(), "ok" | "replayed" | "input_required"))
    }
}

/// The attribute of a limit's `field` kept flat on the item (`limit`,
/// `limit_unit`, …), for its first limit.
fn flat_attribute(field: &str) -> String {
    if field == "name" {
        attr::LIMIT.to_owned()
    } else {
        format!("limit_{field}")
    }
}

/// The limits an audit item names: its `limits` list, or (an item
/// written before the list was kept) its one `limit_*` set.
fn limits_of(item: &Attributes) -> Vec<ReachedLimit> {
    let policy_version = item
        .get("policy_version")
        .and_then(Value::as_n)
        .and_then(|v| v.parse().ok())
        .unwrap_or_default();
    let limit = |get: &dyn Fn(&str) -> Option<String>| -> Option<ReachedLimit> {
        Some(ReachedLimit {
            name: get("name")?,
            unit: get("unit").unwrap_or_default(),
            applies_to: get("applies_to").unwrap_or_default(),
            max: get("max"),
            used: get("used"),
            this_call: get("this_call").unwrap_or_default(),
            resets_at: None,
            policy_version,
        })
    };
    if let Some(list) = item.get(attr::LIMITS).and_then(Value::as_l) {
        return list
            .iter()
            .filter_map(|entry| {
                let map = entry.as_m()?;
                limit(&|name| map.get(name).and_then(Value::as_s).map(str::to_owned))
            })
            .collect();
    }
    let flat = |field: &str| {
        item.get(&flat_attribute(field))
            .and_then(Value::as_s)
            .map(str::to_owned)
    };
    limit(&flat).into_iter().collect()
}

/// The timing an audit item keeps, if it keeps one.
fn timing_of(item: &Attributes) -> Option<Timing> {
    let number = |value: &Value| value.as_n().and_then(|n| n.parse::<u64>().ok());
    let stages = item.get(attr::STAGES_US)?.as_m()?;
    let elapsed = item.get(attr::ELAPSED_US).and_then(number)?;
    Some(Timing {
        stages: Stage::ALL
            .into_iter()
            .map(|stage| (stage.as_str(), stages.get(stage.as_str()).and_then(number).unwrap_or(0)))
            .collect(),
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_arguments_are_bounded_on_a_character_boundary() {
        assert_eq!(stored_arguments(b"  \n"), None);
        let short = stored_arguments(br#"{"note":"<script>"}"#).unwrap();
        assert_eq!(short.text, r#"{"note":"<script>"}"#);
        assert!(!short.truncated);
        let long = "\u{e9}".repeat(MAX_STORED_ARGUMENTS);
        let cut = stored_arguments(long.as_bytes()).unwrap();
        assert!(cut.truncated);
        assert!(cut.text.len() <= MAX_STORED_ARGUMENTS);
        assert!(cut.text.chars().all(|c| c == '\u{e9}'));
        let invalid = stored_arguments(&[b'{', 0xff, b'}']).unwrap();
        assert_eq!(invalid.text, "{\u{fffd}}");
    }
}
