//! What became of a call, named once: the audit item's outcome and the log
//! line's are the same word.

use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::audit::{CallFacts, KeyFacts, Outcome, OutcomeKind};
use crate::edge::trace::{self, Stage};
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::tool::{DocumentRef, ToolDefinition};
use http::StatusCode;
use serde_json::Value;

/// A successful call.
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    /// 200 or 201.
    pub status: StatusCode,
    pub data: Value,
    /// Whether it is a stored response sent again.
    pub replayed: bool,
    /// The document the call created or replayed.
    pub document: Option<DocumentRef>,
}

/// What became of a call: named here once, for the audit item and the log
/// line alike.
pub(super) fn outcome_kind(result: &Result<Success, ToolError>) -> OutcomeKind {
    match result {
        Ok(success) if success.replayed => OutcomeKind::Replayed,
        Ok(_) => OutcomeKind::Ok,
        Err(err) if err.is_denial() => OutcomeKind::Denied,
        Err(ToolError::InputRequired { .. }) => OutcomeKind::InputRequired,
        Err(_) => OutcomeKind::ToolError,
    }
}

/// The audit view of a result; `authorized`: the call passed
/// authentication and the scope check.
pub(super) fn outcome<'a>(
    result: &'a Result<Success, ToolError>,
    key: Option<&'a KeyFacts>,
    authorized: bool,
) -> Outcome<'a> {
    let kind = outcome_kind(result);
    match result {
        Ok(success) => Outcome {
            kind,
            http_status: success.status.as_u16(),
            code: None,
            message: None,
            document: success.document.as_ref(),
            key,
            authorized,
        },
        Err(err) => Outcome {
            kind,
            http_status: err.status().as_u16(),
            code: Some(err.code().as_str()),
            message: Some(err.public_message()),
            document: None,
            key,
            authorized,
        },
    }
}

/// A tool's contract version: the first 12 hex digits of the SHA-256 of
/// its published definition (name, description, schemas, annotations). It
/// changes exactly when what a caller was promised changes, which the
/// contract snapshots freeze.
pub(super) fn contract_version(definition: &ToolDefinition) -> String {
    let published = serde_json::to_vec(definition).unwrap_or_default();
    hex::encode(&Sha256::digest(&published)[..6])
}

/// An idempotency key as a log line may carry it: the first 12 hex digits
/// of its SHA-256 (the key itself stays in the audit item).
pub(super) fn key_hash(key: &str) -> String {
    hex::encode(&Sha256::digest(key.as_bytes())[..6])
}

/// What the one log line of a call says.
pub(super) struct Logged<'a> {
    pub facts: &'a CallFacts,
    pub result: &'a Result<Success, ToolError>,
    pub started: Instant,
    pub round_trips: u64,
    /// The identified caller (tenant and user); `None` before identity.
    pub caller: Option<&'a Caller>,
    /// The tool's contract version; `None` for a tool that does not exist.
    pub contract: Option<&'a str>,
    /// The idempotency key of a draft (logged hashed only).
    pub key: Option<&'a str>,
}

impl<'a> Logged<'a> {
    /// The line of a call known only by its facts and result.
    pub fn of(
        facts: &'a CallFacts,
        result: &'a Result<Success, ToolError>,
        started: Instant,
        round_trips: u64,
    ) -> Self {
        Self {
            facts,
            result,
            started,
            round_trips,
            caller: None,
            contract: None,
            key: None,
        }
    }
}

/// Milliseconds, to the microsecond.
fn ms(spent: Duration) -> f64 {
    (spent.as_micros() as f64) / 1000.0
}

/// The facts of one call as its log line and its exported span tell them:
/// who (tenant, user, never a token), what (tool, contract version, the key
/// hashed, never an argument), what became of it (its outcome is the audit
/// item's, [`outcome_kind`]; code and whether it is retryable), and where
/// its time went (each stage, DynamoDB round trips, SDK attempts, Tryton
/// requests).
pub(crate) struct CallLine<'a> {
    pub request_id: &'a str,
    pub trace_id: Option<&'a str>,
    pub tool: &'a str,
    /// `http` or `mcp` (a span attribute; the log line does not repeat it).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub transport: &'static str,
    pub contract: Option<&'a str>,
    pub tenant: Option<&'a str>,
    pub user: Option<&'a str>,
    /// The idempotency key's hash ([`key_hash`]), never the key.
    pub key_hash: Option<String>,
    pub outcome: &'static str,
    pub status: u16,
    pub code: Option<&'static str>,
    pub retryable: bool,
    pub replayed: bool,
    /// The whole call, until its line was written.
    pub duration: Duration,
    /// What the call recorded: its stages and dependency requests.
    pub recorded: trace::Recorded,
    pub round_trips: u64,
    pub sdk_attempts: usize,
    pub tryton_requests: usize,
    pub agent_run_id: Option<&'a str>,
    /// The failure of a call that failed on our side (a 5xx).
    pub server_error: Option<&'a ToolError>,
}

impl<'a> CallLine<'a> {
    /// The facts of the call `line` tells, with what the call being served recorded.
    pub(super) fn of(line: &Logged<'a>) -> Self {
        let Logged { facts, result, .. } = line;
        let recorded = trace::current().map(|(recorded, _)| recorded).unwrap_or_default();
        let sdk_attempts = recorded.requests.iter().filter(|r| r.system == "dynamodb").count();
        let tryton_requests = recorded.requests.iter().filter(|r| r.system == "tryton").count();
        let (status, code, retryable) = match result {
            Ok(success) => (success.status.as_u16(), None, false),
            Err(err) => (err.status().as_u16(), Some(err.code().as_str()), err.retryable()),
        };
        Self {
            request_id: facts.request_id.as_str(),
            trace_id: facts.trace_id.as_deref(),
            tool: facts.tool.as_str(),
            transport: facts.transport,
            contract: line.contract,
            tenant: line.caller.map(|c| c.tenant().as_str()),
            user: line.caller.map(|c| c.user().as_str()),
            key_hash: line.key.map(key_hash),
            outcome: outcome_kind(result).as_str(),
            status,
            code,
            retryable,
            replayed: matches!(result, Ok(success) if success.replayed),
            duration: line.started.elapsed(),
            recorded,
            round_trips: line.round_trips,
            sdk_attempts,
            tryton_requests,
            agent_run_id: facts.agent.run_id.as_deref(),
            server_error: match result {
                Err(err) if err.status().is_server_error() => Some(err),
                _ => None,
            },
        }
    }

    /// Writes the call's one structured log line.
    pub(super) fn log(&self) {
        let duration_ms = ms(self.duration);
        let stage = |stage: Stage| ms(self.recorded.stages.get(stage));
        let (auth_ms, validation_ms, idempotency_ms, erp_ms, audit_ms) = (
            stage(Stage::Auth),
            stage(Stage::Validation),
            stage(Stage::Idempotency),
            stage(Stage::Erp),
            stage(Stage::Audit),
        );
        macro_rules! line {
            ($level:ident, $($extra:tt)*) => {
                tracing::$level!(
                    request_id = self.request_id,
                    trace_id = self.trace_id,
                    tool = self.tool,
                    contract = self.contract,
                    tenant = self.tenant,
                    user = self.user,
                    key_hash = self.key_hash.as_deref(),
                    outcome = self.outcome,
                    status = self.status,
                    code = self.code,
                    retryable = self.retryable,
                    replayed = self.replayed,
                    duration_ms,
                    auth_ms,
                    validation_ms,
                    idempotency_ms,
                    erp_ms,
                    audit_ms,
                    dynamodb_round_trips = self.round_trips,
                    sdk_attempts = self.sdk_attempts,
                    tryton_requests = self.tryton_requests,
                    agent_run_id = self.agent_run_id,
                    $($extra)*
                )
            };
        }
        match self.server_error {
            Some(err) => line!(error, error = %error_chain(err), "tool call failed"),
            None => line!(info, "tool call"),
        }
    }
}

/// Writes the one structured log line of the call `line` tells, and
/// returns what it said (for the call's span).
pub(super) fn log_call<'a>(line: &Logged<'a>) -> CallLine<'a> {
    let call = CallLine::of(line);
    call.log();
    call
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
