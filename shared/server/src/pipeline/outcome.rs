//! What became of a call, named once: the audit item's outcome and the log
//! line's are the same word.

use std::time::Duration;

use super::Success;
use crate::audit::{CallFacts, KeyFacts, Outcome, OutcomeKind};
use draftline_contract::error::ToolError;

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

/// The one structured log line per call: no token, no arguments. Its
/// outcome is the audit item's ([`outcome_kind`]).
pub(super) fn log_call(facts: &CallFacts, result: &Result<Success, ToolError>, elapsed: Duration, round_trips: u64) {
    let duration_ms = elapsed.as_secs_f64() * 1000.0;
    let (request_id, tool, trace_id) = (
        facts.request_id.as_str(),
        facts.tool.as_str(),
        facts.trace_id.as_deref(),
    );
    let agent = &facts.agent;
    let outcome = outcome_kind(result).as_str();
    match result {
        Ok(success) => tracing::info!(
            request_id,
            trace_id,
            tool,
            outcome,
            status = success.status.as_u16(),
            duration_ms,
            dynamodb_round_trips = round_trips,
            replayed = success.replayed,
            agent_run_id = agent.run_id.as_deref(),
            "tool call"
        ),
        Err(err) if err.status().is_server_error() => tracing::error!(
            request_id,
            trace_id,
            tool,
            outcome,
            status = err.status().as_u16(),
            code = err.code().as_str(),
            duration_ms,
            dynamodb_round_trips = round_trips,
            replayed = false,
            error = %error_chain(err),
            "tool call failed"
        ),
        Err(err) => tracing::info!(
            request_id,
            trace_id,
            tool,
            outcome,
            status = err.status().as_u16(),
            code = err.code().as_str(),
            duration_ms,
            dynamodb_round_trips = round_trips,
            replayed = false,
            "tool call"
        ),
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
