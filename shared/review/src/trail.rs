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

/// How many items one DynamoDB page of a run reads.
const QUERY_PAGE: i32 = 100;
/// How many DynamoDB pages one page of a run may read before it stops
/// short (a run with many calls of other branches in between).
const MAX_QUERY_PAGES: usize = 5;

const NOTHING: &str = "Nothing was read or changed.";

/// One tool call (or decision) as the audit recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallRecord {
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
    /// The model.
    pub model: Option<String>,
    /// The prompt version.
    pub prompt_version: Option<String>,
    /// What the executor said a person approved.
    pub approval: Option<String>,
    /// The document produced or touched: number and kind.
    pub document: Option<(String, String)>,
    /// The arguments as stored (bounded), and whether they were cut.
    pub arguments: Option<(String, bool)>,
    /// The request id.
    pub request_id: String,
}

impl CallRecord {
    fn from_item(item: &HashMap<String, AttributeValue>) -> Self {
        let s = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        let n = |name: &str| item.get(name).and_then(|v| v.as_n().ok()).cloned();
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
        }
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

/// The audit partition of run `run` of the person's tenant.
fn run_partition(person: &Caller, run: &str) -> String {
    format!("T#{}#RUN#{run}", person.tenant())
}

/// Up to `limit` calls of run `run` made in the person's branch, in order,
/// after position `after` (a sort key of this run). Reads at most a few
/// DynamoDB pages; a page may be short and still have more after it.
pub async fn run_calls(
    db: &Db,
    person: &Caller,
    run: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<RunPage, ToolError> {
    let pk = run_partition(person, run);
    let mut start = after.map(|sk| {
        HashMap::from([
            ("pk".to_owned(), AttributeValue::S(pk.clone())),
            ("sk".to_owned(), AttributeValue::S(sk.to_owned())),
        ])
    });
    let mut calls = Vec::new();
    for _ in 0..MAX_QUERY_PAGES {
        let out = db
            .client()
            .query()
            .table_name(db.table())
            .key_condition_expression("pk = :pk")
            .filter_expression("branch_id = :branch")
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

/// The calls that touched document `id` in the person's branch, oldest
/// first, at most `limit` (the `gsi1` index: `T#<tenant>#DOC#<id>`).
pub async fn document_calls(db: &Db, person: &Caller, id: &str, limit: i32) -> Result<Vec<CallRecord>, ToolError> {
    let out = db
        .client()
        .query()
        .table_name(db.table())
        .index_name("gsi1")
        .key_condition_expression("gsi1pk = :pk")
        .filter_expression("branch_id = :branch")
        .expression_attribute_values(":pk", AttributeValue::S(format!("T#{}#DOC#{id}", person.tenant())))
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
