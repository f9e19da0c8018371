//! Reading the audit trail (`draftline_server::audit`) for people: the
//! calls of one agent run, and the calls that touched one document.
//!
//! A run id is chosen by the caller, so two branches' agents can share one:
//! every read is filtered by the reviewer's branch in DynamoDB itself, and
//! another branch's calls are never returned, counted or hinted at.

use draftline_contract::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::store::{Attributes, Condition, Index, Query, Value};
use draftline_server::audit;
use draftline_server::storage::Table;

/// How many items one DynamoDB page of a run reads.
const QUERY_PAGE: i32 = 100;
/// How many DynamoDB pages one page of a run may read before it stops
/// short (a run with many calls of other branches in between).
const MAX_QUERY_PAGES: usize = 5;

const NOTHING: &str = "Nothing was read or changed.";

/// One tool call (or decision) as the audit recorded it.
pub use draftline_server::audit::StoredCall as CallRecord;

/// Which calls of a run a person may read: those of the tools of modules
/// their scopes read or approve (a person's decisions by the kind of their
/// document), and calls of tools of no module at all (a name no tool has),
/// whose arguments are withheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    /// The modules of the deployment (`purchasing`, `inventory`, …).
    known: Vec<String>,
    /// The modules the person may read.
    readable: Vec<String>,
}

/// The tool prefix of a person's decisions (`review.approve`, `review.reject`).
const DECISIONS: &str = "review.";

impl RunView {
    /// The view of `person` over a deployment with `modules`.
    pub fn of(person: &Caller, modules: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let known: Vec<String> = modules.into_iter().map(Into::into).collect();
        let readable = known
            .iter()
            .filter(|module| {
                let scopes = person.scopes();
                scopes.grants(&format!("{module}:read")) || scopes.grants(&format!("{module}:approve"))
            })
            .cloned()
            .collect();
        Self { known, readable }
    }

    /// The module a call's tool belongs to, if any (a decision's is its
    /// document's: purchasing for orders, sales for quotes).
    pub fn module_of<'a>(&'a self, call: &CallRecord) -> Option<&'a str> {
        if call.tool.starts_with(DECISIONS) {
            let module = match call.document.as_ref().map(|(_, kind)| kind.as_str()) {
                Some("purchase_order") => "purchasing",
                Some("quote") => "sales",
                _ => return None,
            };
            return self.known.iter().find(|m| *m == module).map(String::as_str);
        }
        self.known
            .iter()
            .find(|module| {
                call.tool
                    .strip_prefix(module.as_str())
                    .is_some_and(|rest| rest.starts_with('_'))
            })
            .map(String::as_str)
    }

    /// Whether the person may read `call` at all.
    pub fn shows(&self, call: &CallRecord) -> bool {
        match self.module_of(call) {
            Some(module) => self.readable.iter().any(|m| m == module),
            None => true,
        }
    }

    /// Whether the person may read `call` with its arguments (a call of a
    /// module they read, not of a tool of no module).
    pub fn reads(&self, call: &CallRecord) -> bool {
        self.module_of(call)
            .is_some_and(|module| self.readable.iter().any(|m| m == module))
    }

    /// The filter of the calls [`RunView::shows`] in `person`'s branch.
    fn filter(&self, person: &Caller) -> Condition {
        let tool_begins = |prefix: String| Condition::BeginsWith(audit::attr::TOOL.to_owned(), prefix);
        let mut shown: Vec<Condition> = self
            .readable
            .iter()
            .map(|module| tool_begins(format!("{module}_")))
            .collect();
        let kinds: Vec<Condition> = self
            .readable
            .iter()
            .filter_map(|module| match module.as_str() {
                "purchasing" => Some("purchase_order"),
                "sales" => Some("quote"),
                _ => None,
            })
            .map(|kind| Condition::Equals(audit::attr::DOCUMENT_KIND.to_owned(), Value::s(kind)))
            .collect();
        if !kinds.is_empty() {
            shown.push(Condition::All(vec![
                tool_begins(DECISIONS.to_owned()),
                Condition::Any(kinds),
            ]));
        }
        let mut owned = vec![tool_begins(DECISIONS.to_owned())];
        owned.extend(self.known.iter().map(|module| tool_begins(format!("{module}_"))));
        shown.push(Condition::Not(Box::new(Condition::Any(owned))));
        Condition::All(vec![in_branch(person), Condition::Any(shown)])
    }
}

/// The filter of the items of `person`'s branch.
fn in_branch(person: &Caller) -> Condition {
    Condition::Equals(audit::attr::BRANCH.to_owned(), Value::s(person.branch().as_str()))
}

/// A page of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunPage {
    /// The calls, in order.
    pub calls: Vec<CallRecord>,
    /// Where the next page starts (the last position read), if more may follow.
    pub more_after: Option<String>,
}

/// Up to `limit` calls of run `run` made in the person's branch that
/// `view` shows, in order, after position `after` (a sort key of this
/// run). Reads at most a few DynamoDB pages; a page may be short and still
/// have more after it.
pub async fn run_calls(
    table: &dyn Table,
    person: &Caller,
    view: &RunView,
    run: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<RunPage, ToolError> {
    let pk = audit::run_partition(person.tenant(), run);
    let mut query = Query {
        filter: Some(view.filter(person)),
        limit: Some(QUERY_PAGE),
        after: after.map(|sk| Attributes::from([("pk".to_owned(), Value::s(&pk)), ("sk".to_owned(), Value::s(sk))])),
        ..Query::partition(&pk)
    };
    let mut calls = Vec::new();
    for _ in 0..MAX_QUERY_PAGES {
        let page = table.query(&query, NOTHING).await?;
        for item in &page.items {
            calls.push(CallRecord::from_item(item));
            if calls.len() > limit {
                calls.truncate(limit);
                let more_after = calls.last().map(|c| c.position.clone());
                return Ok(RunPage { calls, more_after });
            }
        }
        match page.last {
            Some(last) => query.after = Some(last),
            None => {
                return Ok(RunPage {
                    calls,
                    more_after: None,
                });
            }
        }
    }
    // Out of budget: continue after the last item evaluated.
    let more_after = query
        .after
        .and_then(|key| key.get("sk").and_then(Value::as_s).map(str::to_owned));
    Ok(RunPage { calls, more_after })
}

/// Whether a call of agent run `run` in the person's branch reached a limit
/// of the tenant's policy (its audit item names one: refused, or let
/// through by observe mode). Reads the run's partition for keys only, at
/// most [`MAX_QUERY_PAGES`] pages: a longer run is looked at so far.
pub async fn reached_a_limit(table: &dyn Table, person: &Caller, run: &str) -> Result<bool, ToolError> {
    let mut query = Query {
        filter: Some(Condition::All(vec![
            Condition::Exists(audit::attr::LIMIT.to_owned()),
            in_branch(person),
        ])),
        keys_only: true,
        ..Query::partition(audit::run_partition(person.tenant(), run))
    };
    for _ in 0..MAX_QUERY_PAGES {
        let page = table.query(&query, NOTHING).await?;
        if !page.items.is_empty() {
            return Ok(true);
        }
        match page.last {
            Some(last) => query.after = Some(last),
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// The calls that touched document `id` in the person's branch, oldest
/// first, at most `limit` (the `gsi1` index: `T#<tenant>#DOC#<id>`).
pub async fn document_calls(
    table: &dyn Table,
    person: &Caller,
    id: &str,
    limit: i32,
) -> Result<Vec<CallRecord>, ToolError> {
    let query = Query {
        index: Some(Index {
            name: audit::DOCUMENT_INDEX,
            pk: audit::attr::DOCUMENT_PARTITION,
            sk: audit::attr::DOCUMENT_SORT,
        }),
        filter: Some(in_branch(person)),
        limit: Some(limit),
        ..Query::partition(audit::document_partition(person.tenant(), id))
    };
    let page = table.query(&query, NOTHING).await?;
    Ok(page.items.iter().map(CallRecord::from_item).collect())
}

/// The call that created document `id` (its first audit item in the
/// person's branch): where the queue reads model and prompt version.
pub async fn creating_call(table: &dyn Table, person: &Caller, id: &str) -> Result<Option<CallRecord>, ToolError> {
    Ok(document_calls(table, person, id, 3).await?.into_iter().next())
}
