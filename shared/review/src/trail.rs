//! Reading the audit trail (`draftline_server::audit`) for people: the
//! calls of one agent run, and the calls that touched one document.
//!
//! A run id is chosen by the caller, so two branches' agents can share one:
//! every read is filtered by the reviewer's branch in DynamoDB itself, and
//! another branch's calls are never returned, counted or hinted at.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::ToolError;
use draftline_contract::identity::Caller;
use draftline_dynamo::{Db, store_error};
use draftline_server::audit;

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

    /// The DynamoDB filter of the calls [`RunView::shows`], on top of the
    /// branch (`:branch`): its expression and values.
    fn filter(&self) -> (String, HashMap<String, AttributeValue>) {
        let mut values = HashMap::new();
        let mut prefix = |name: String, value: String| {
            values.insert(name.clone(), AttributeValue::S(value));
            name
        };
        let mut shown = Vec::new();
        for (i, module) in self.readable.iter().enumerate() {
            let name = prefix(format!(":read{i}"), format!("{module}_"));
            shown.push(format!("begins_with({}, {name})", audit::attr::TOOL));
        }
        let decisions = prefix(":decisions".to_owned(), DECISIONS.to_owned());
        let kinds: Vec<String> = self
            .readable
            .iter()
            .filter_map(|module| match module.as_str() {
                "purchasing" => Some("purchase_order"),
                "sales" => Some("quote"),
                _ => None,
            })
            .enumerate()
            .map(|(i, kind)| prefix(format!(":kind{i}"), kind.to_owned()))
            .collect();
        if !kinds.is_empty() {
            shown.push(format!(
                "(begins_with({tool}, {decisions}) AND {kind} IN ({}))",
                kinds.join(", "),
                tool = audit::attr::TOOL,
                kind = audit::attr::DOCUMENT_KIND,
            ));
        }
        let mut owned = vec![format!("begins_with({}, {decisions})", audit::attr::TOOL)];
        for (i, module) in self.known.iter().enumerate() {
            let name = prefix(format!(":known{i}"), format!("{module}_"));
            owned.push(format!("begins_with({}, {name})", audit::attr::TOOL));
        }
        shown.push(format!("NOT ({})", owned.join(" OR ")));
        (
            format!("{} = :branch AND ({})", audit::attr::BRANCH, shown.join(" OR ")),
            values,
        )
    }
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
    db: &Db,
    person: &Caller,
    view: &RunView,
    run: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<RunPage, ToolError> {
    let pk = audit::run_partition(person.tenant(), run);
    let (filter, values) = view.filter();
    let mut start = after.map(|sk| {
        HashMap::from([
            ("pk".to_owned(), AttributeValue::S(pk.clone())),
            ("sk".to_owned(), AttributeValue::S(sk.to_owned())),
        ])
    });
    let mut calls = Vec::new();
    for _ in 0..MAX_QUERY_PAGES {
        let out = run_query(db, person, &pk)
            .filter_expression(filter.as_str())
            .set_expression_attribute_values(Some(values.clone()))
            .expression_attribute_values(":pk", AttributeValue::S(pk.clone()))
            .expression_attribute_values(":branch", AttributeValue::S(person.branch().to_string()))
            .scan_index_forward(true)
            .limit(QUERY_PAGE)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .map_err(|e| store_error(e, NOTHING))?;
        for item in out.items() {
            calls.push(CallRecord::from_item(item));
            if calls.len() > limit {
                calls.truncate(limit);
                let more_after = calls.last().map(|c| c.position.clone());
                return Ok(RunPage { calls, more_after });
            }
        }
        match out.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => {
                return Ok(RunPage {
                    calls,
                    more_after: None,
                });
            }
        }
    }
    // Out of budget: continue after the last item evaluated.
    let more_after = start.and_then(|key| key.get("sk").and_then(|v| v.as_s().ok()).cloned());
    Ok(RunPage { calls, more_after })
}

/// A query of the run partition `pk`, its items of the person's branch
/// (`:pk` and `:branch` set; values set after replace them, so a caller
/// that sets its own sets these again).
fn run_query(db: &Db, person: &Caller, pk: &str) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
    db.client()
        .query()
        .table_name(db.table())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
        .expression_attribute_values(":branch", AttributeValue::S(person.branch().to_string()))
}

/// Whether a call of agent run `run` in the person's branch reached a limit
/// of the tenant's policy (its audit item names one: refused, or let
/// through by observe mode). Reads the run's partition for keys only, at
/// most [`MAX_QUERY_PAGES`] pages: a longer run is looked at so far.
pub async fn reached_a_limit(db: &Db, person: &Caller, run: &str) -> Result<bool, ToolError> {
    let pk = audit::run_partition(person.tenant(), run);
    let mut start = None;
    for _ in 0..MAX_QUERY_PAGES {
        let out = db
            .client()
            .query()
            .table_name(db.table())
            .key_condition_expression("pk = :pk")
            .filter_expression(format!(
                "attribute_exists(#limit) AND {} = :branch",
                audit::attr::BRANCH
            ))
            .expression_attribute_names("#limit", audit::attr::LIMIT)
            .expression_attribute_values(":pk", AttributeValue::S(pk.clone()))
            .expression_attribute_values(":branch", AttributeValue::S(person.branch().to_string()))
            .projection_expression("sk")
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .map_err(|e| store_error(e, NOTHING))?;
        if !out.items().is_empty() {
            return Ok(true);
        }
        match out.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// The calls that touched document `id` in the person's branch, oldest
/// first, at most `limit` (the `gsi1` index: `T#<tenant>#DOC#<id>`).
pub async fn document_calls(db: &Db, person: &Caller, id: &str, limit: i32) -> Result<Vec<CallRecord>, ToolError> {
    let out = db
        .client()
        .query()
        .table_name(db.table())
        .index_name(audit::DOCUMENT_INDEX)
        .key_condition_expression(format!("{} = :pk", audit::attr::DOCUMENT_PARTITION))
        .filter_expression(format!("{} = :branch", audit::attr::BRANCH))
        .expression_attribute_values(":pk", AttributeValue::S(audit::document_partition(person.tenant(), id)))
        .expression_attribute_values(":branch", AttributeValue::S(person.branch().to_string()))
        .scan_index_forward(true)
        .limit(limit)
        .send()
        .await
        .map_err(|e| store_error(e, NOTHING))?;
    Ok(out.items().iter().map(CallRecord::from_item).collect())
}

/// The call that created document `id` (its first audit item in the
/// person's branch): where the queue reads model and prompt version.
pub async fn creating_call(db: &Db, person: &Caller, id: &str) -> Result<Option<CallRecord>, ToolError> {
    Ok(document_calls(db, person, id, 3).await?.into_iter().next())
}
