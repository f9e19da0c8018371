//! The audit record every call leaves (DESIGN.md rule 7): which agent run and
//! tool call, on behalf of whom, with which model and prompt, what happened.
//!
//! Items live under `T#<tenant>#RUN#<run id>` (one partition per agent run,
//! `none` for calls without a run id), sorted by time; calls that touch a
//! document are also findable by it through `gsi1` (`T#<tenant>#DOC#<id>`).
//! Unauthenticated calls have no trusted tenant and go under `T#_anonymous`.
//! A draft's audit item is written inside the draft's transaction; every
//! other outcome is written by its own `PutItem` once the outcome is known.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use chrono::{DateTime, SecondsFormat, Utc};

use crate::dynamo::{Db, store_error};
use crate::error::ToolError;
use crate::identity::Caller;
use crate::request::AgentContext;

/// The tenant segment used when the caller could not be authenticated.
pub const ANONYMOUS_TENANT: &str = "_anonymous";

/// What became of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The tool did its work (read returned, draft created).
    Ok,
    /// The call failed: invalid input, not found, conflict, dependency, bug.
    ToolError,
    /// Authentication or authorization refused it.
    Denied,
    /// A stored response was sent again.
    Replayed,
}

impl Outcome {
    /// The outcome as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Denied => "denied",
            Self::Replayed => "replayed",
        }
    }
}

/// One call's audit record, filled in as the pipeline goes.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    /// Request id.
    pub request_id: String,
    /// When the call arrived.
    pub at: DateTime<Utc>,
    /// The tool asked for.
    pub tool: String,
    /// How the call arrived (`http`, `mcp`).
    pub transport: &'static str,
    /// Outcome.
    pub outcome: Outcome,
    /// The error code, if any.
    pub code: Option<&'static str>,
    /// The HTTP status answered.
    pub http_status: u16,
    /// The caller, once authenticated.
    pub caller: Option<Caller>,
    /// The executor's headers.
    pub agent: AgentContext,
    /// The idempotency key, for drafts.
    pub idempotency_key: Option<String>,
    /// The fingerprint, for drafts.
    pub fingerprint: Option<String>,
    /// The document created or replayed.
    pub document: Option<AuditDocument>,
}

/// The document a call created or replayed, as the audit item names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditDocument {
    /// Document id.
    pub id: String,
    /// Human number.
    pub number: String,
    /// Kind (`purchase_order`).
    pub kind: String,
}

impl From<&crate::tool::DocumentRef> for AuditDocument {
    fn from(doc: &crate::tool::DocumentRef) -> Self {
        Self {
            id: doc.id.clone(),
            number: doc.number.clone(),
            kind: doc.kind.to_owned(),
        }
    }
}

impl AuditRecord {
    /// A record for a call that just arrived.
    pub fn begin(request_id: &str, tool: &str, transport: &'static str, at: DateTime<Utc>) -> Self {
        Self {
            request_id: request_id.to_owned(),
            at,
            tool: tool.chars().take(64).collect(),
            transport,
            outcome: Outcome::ToolError,
            code: None,
            http_status: 0,
            caller: None,
            agent: AgentContext::default(),
            idempotency_key: None,
            fingerprint: None,
            document: None,
        }
    }

    fn tenant(&self) -> &str {
        self.caller.as_ref().map_or(ANONYMOUS_TENANT, |c| c.tenant().as_str())
    }

    /// The partition key of this record.
    pub fn pk(&self) -> String {
        format!(
            "T#{}#RUN#{}",
            self.tenant(),
            self.agent.run_id.as_deref().unwrap_or("none")
        )
    }

    /// The item.
    pub fn to_item(&self) -> HashMap<String, AttributeValue> {
        let s = |v: &str| AttributeValue::S(v.to_owned());
        let sk = format!(
            "AUDIT#{}#{}",
            self.at.to_rfc3339_opts(SecondsFormat::Millis, true),
            self.request_id
        );
        let mut item = HashMap::from([
            ("pk".to_owned(), s(&self.pk())),
            ("sk".to_owned(), s(&sk)),
            ("kind".to_owned(), s("audit")),
            ("request_id".to_owned(), s(&self.request_id)),
            (
                "at".to_owned(),
                s(&self.at.to_rfc3339_opts(SecondsFormat::Millis, true)),
            ),
            ("tool".to_owned(), s(&self.tool)),
            ("transport".to_owned(), s(self.transport)),
            ("outcome".to_owned(), s(self.outcome.as_str())),
            (
                "http_status".to_owned(),
                AttributeValue::N(self.http_status.to_string()),
            ),
        ]);
        let mut opt = |name: &str, value: Option<&str>| {
            if let Some(v) = value {
                item.insert(name.to_owned(), s(v));
            }
        };
        opt("code", self.code);
        opt("agent_run_id", self.agent.run_id.as_deref());
        opt("tool_call_id", self.agent.tool_call_id.as_deref());
        opt("model", self.agent.model.as_deref());
        opt("prompt_version", self.agent.prompt_version.as_deref());
        opt("approval", self.agent.approval.map(|a| a.as_str()));
        opt("approval_reason", self.agent.approval_reason.as_deref());
        opt("idempotency_key", self.idempotency_key.as_deref());
        opt("fingerprint", self.fingerprint.as_deref());
        if let Some(caller) = &self.caller {
            opt("tenant_id", Some(caller.tenant().as_str()));
            opt("branch_id", Some(caller.branch().as_str()));
            opt("on_behalf_of", Some(caller.user().as_str()));
            opt("scopes", Some(&caller.scopes().to_string()));
        }
        if let Some(doc) = &self.document {
            opt("document_id", Some(&doc.id));
            opt("document_number", Some(&doc.number));
            opt("document_kind", Some(&doc.kind));
            opt("gsi1pk", Some(&format!("T#{}#DOC#{}", self.tenant(), doc.id)));
            opt("gsi1sk", Some(&sk));
        }
        item
    }

    /// The transaction item that writes this record.
    pub fn put(&self, db: &Db) -> Result<TransactWriteItem, ToolError> {
        let put = Put::builder()
            .table_name(db.table())
            .set_item(Some(self.to_item()))
            .build()
            .map_err(ToolError::internal)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// Writes this record on its own.
    pub async fn write(&self, db: &Db) -> Result<(), ToolError> {
        db.client()
            .put_item()
            .table_name(db.table())
            .set_item(Some(self.to_item()))
            .send()
            .await
            .map_err(|e| store_error(e, "The call could not be recorded, so its result was withheld."))?;
        Ok(())
    }
}
