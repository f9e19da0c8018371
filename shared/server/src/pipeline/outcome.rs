//! What became of a call, named once: the audit item's outcome and the log
//! line's are the same word.

use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::Success;
use crate::audit::{CallFacts, KeyFacts, Outcome, OutcomeKind};
use crate::edge::trace::{self, Stage};
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::tool::ToolDefinition;

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

/// The one structured log line per call: who (tenant, user, never a
/// token), what (tool, contract version, the key hashed, never an
/// argument), what became of it (its outcome is the audit item's,
/// [`outcome_kind`]; code and whether it is retryable), and where its time
/// went (each stage, DynamoDB round trips and SDK attempts).
pub(super) fn log_call(line: &Logged<'_>) {
    let Logged {
        facts, result, caller, ..
    } = line;
    let duration_ms = ms(line.started.elapsed());
    let (request_id, tool, trace_id) = (
        facts.request_id.as_str(),
        facts.tool.as_str(),
        facts.trace_id.as_deref(),
    );
    let tenant = caller.map(|c| c.tenant().as_str());
    let user = caller.map(|c| c.user().as_str());
    let key_hash = line.key.map(key_hash);
    let recorded = trace::current().map(|(recorded, _)| recorded).unwrap_or_default();
    let stage = |stage: Stage| ms(recorded.stages.get(stage));
    let (auth_ms, validation_ms, idempotency_ms, erp_ms, audit_ms) = (
        stage(Stage::Auth),
        stage(Stage::Validation),
        stage(Stage::Idempotency),
        stage(Stage::Erp),
        stage(Stage::Audit),
    );
    let sdk_attempts = recorded.requests.iter().filter(|r| r.system == "dynamodb").count();
    let tryton_requests = recorded.requests.iter().filter(|r| r.system == "tryton").count();
    let agent_run_id = facts.agent.run_id.as_deref();
    let outcome = outcome_kind(result).as_str();
    let round_trips = line.round_trips;
    let contract = line.contract;
    let (status, code, retryable) = match result {
        Ok(success) => (success.status.as_u16(), None, false),
        Err(err) => (err.status().as_u16(), Some(err.code().as_str()), err.retryable()),
    };
    let replayed = matches!(result, Ok(success) if success.replayed);
    macro_rules! line {
        ($level:ident, $($extra:tt)*) => {
            tracing::$level!(
                request_id,
                trace_id,
                tool,
                contract,
                tenant,
                user,
                key_hash = key_hash.as_deref(),
                outcome,
                status,
                code,
                retryable,
                replayed,
                duration_ms,
                auth_ms,
                validation_ms,
                idempotency_ms,
                erp_ms,
                audit_ms,
                dynamodb_round_trips = round_trips,
                sdk_attempts,
                tryton_requests,
                agent_run_id,
                $($extra)*
            )
        };
    }
    match result {
        Err(err) if err.status().is_server_error() => {
            line!(error, error = %error_chain(err), "tool call failed")
        }
        _ => line!(info, "tool call"),
    }
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
