//! `tools/list` and `tools/call`.
//!
//! - `tools/list` shows the tools the caller's scopes allow, sorted by name
//!   (the [`Registry`](draftline_contract::tool::Registry) order), each as
//!   [`listing::mcp_tool`] presents it, [`PAGE_SIZE`] per page with an opaque
//!   `nextCursor`.
//! - `tools/call` runs the one pipeline ([`App::invoke`] with
//!   [`Transport::Mcp`]: auth, scope, validation, idempotency, audit). Data
//!   comes back as `structuredContent` and as JSON text; a tool failure is a
//!   result with `isError: true` and the model-readable message. Only an
//!   unknown tool (and malformed parameters) is a protocol error (-32602), and
//!   missing or invalid credentials are HTTP 401.
//!
//! An error result carries no `structuredContent`: clients validate
//! `structuredContent` against the tool's `outputSchema` even when `isError`
//! is true (the TypeScript SDK's `Client.callTool` does), and an error object
//! would fail that check and hide the message from the model. The error
//! object travels as JSON text and in `_meta.error` instead.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use rmcp::model::{CacheScope, CallToolResult, ContentBlock, ErrorCode, ListToolsResult, RequestId, ResultType, Tool};
use serde_json::{Map, Value, json};

use super::jsonrpc::{ProtocolError, encode};
use super::server::CACHE_TTL_MS;
use crate::confirm::{self, Answer};
use crate::edge::trace::TraceContext;
use crate::listing;
use crate::pipeline::{App, Entry, Invocation};
use crate::response;
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::tool::ToolDefinition;

/// Tools per `tools/list` page.
pub const PAGE_SIZE: usize = 50;

const CURSOR_PREFIX: &str = "after:";

/// The cursor that continues a listing after the tool called `name`.
pub fn cursor_after(name: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{name}"))
}

/// The tool name a cursor continues after, if it is one we issued.
fn read_cursor(cursor: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let name = text.strip_prefix(CURSOR_PREFIX)?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// One page of `tools` (sorted by name): those after `after`, at most
/// `size`, and the cursor of the next page if there is one.
pub fn page<'a>(
    tools: &[&'a ToolDefinition],
    after: Option<&str>,
    size: usize,
) -> (Vec<&'a ToolDefinition>, Option<String>) {
    let start = after.map_or(0, |after| tools.partition_point(|tool| tool.name <= after));
    let rest = tools.get(start..).unwrap_or_default();
    let size = size.max(1);
    let shown: Vec<&ToolDefinition> = rest.iter().take(size).copied().collect();
    let next = (rest.len() > size)
        .then(|| shown.last().map(|last| cursor_after(last.name)))
        .flatten();
    (shown, next)
}

/// Answers `tools/list` for `caller`.
pub fn list(
    app: &App,
    caller: &Caller,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
) -> Result<Value, ProtocolError> {
    let after = match params.and_then(|params| params.get("cursor")) {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(read_cursor(cursor).ok_or_else(|| {
            ProtocolError::invalid_params(
                StatusCode::OK,
                Some(id.clone()),
                "Invalid params: the cursor is not one this server issued; list the tools again without a cursor.",
            )
        })?),
        Some(_) => {
            return Err(ProtocolError::invalid_params(
                StatusCode::OK,
                Some(id.clone()),
                "Invalid params: 'cursor' must be a string.",
            ));
        }
    };
    let visible: Vec<&ToolDefinition> = app.registry().visible_to(caller.scopes()).collect();
    let (shown, next_cursor) = page(&visible, after.as_deref(), PAGE_SIZE);
    let tools = shown
        .into_iter()
        .map(|definition| serde_json::from_value::<Tool>(listing::mcp_tool(definition)))
        .collect::<Result<Vec<Tool>, _>>()
        .map_err(|err| {
            tracing::error!(error = %err, "a tool listing does not fit the MCP Tool type");
            ProtocolError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(id.clone()),
                ErrorCode::INTERNAL_ERROR,
                "Internal error: the tool list could not be built.",
            )
        })?;
    Ok(encode(&ListToolsResult {
        result_type: Some(ResultType::COMPLETE),
        meta: None,
        next_cursor,
        ttl_ms: Some(CACHE_TTL_MS),
        // The list depends on the caller's scopes.
        cache_scope: Some(CacheScope::Private),
        tools,
    }))
}

/// How a `tools/call` ended.
#[derive(Debug)]
pub enum Called {
    /// A `CallToolResult` (success or `isError`), with the pipeline's request id.
    Result {
        result: Value,
        /// The request id of the invocation.
        request_id: String,
    },
    /// A protocol error: malformed parameters, or an unknown tool (then
    /// with the request id of the audited invocation).
    Protocol {
        error: ProtocolError,
        /// The request id of the invocation, if the pipeline ran.
        request_id: Option<String>,
    },
    /// The credentials were missing or invalid (HTTP 401); the call was audited as denied.
    Unauthenticated {
        /// Why.
        error: ToolError,
        /// The request id of the invocation.
        request_id: String,
    },
}

/// The tool a `tools/call` names, if it names one.
pub fn called_name(params: Option<&Map<String, Value>>) -> Option<&str> {
    params.and_then(|params| params.get("name")).and_then(Value::as_str)
}

/// Answers `tools/call`: runs the pipeline for the request as it entered
/// (its identity decided once by the endpoint) and shapes its answer.
pub async fn call(app: &App, entry: &Entry<'_>, id: &RequestId, params: Option<&Map<String, Value>>) -> Called {
    let invalid = |message: &str| Called::Protocol {
        error: ProtocolError::invalid_params(StatusCode::OK, Some(id.clone()), message),
        request_id: None,
    };
    let Some(name) = called_name(params) else {
        return invalid("Invalid params: tools/call needs 'name', the tool's name as a string.");
    };
    let arguments = match params.and_then(|params| params.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(arguments @ Value::Object(_)) => arguments.clone(),
        Some(_) => return invalid("Invalid params: 'arguments' must be a JSON object."),
    };
    let body = arguments.to_string();
    let answer = answer_of(params);
    // The trace a client carries in `_meta` (MCP 2026-07-28) continues
    // over the request's own; a malformed one is ignored.
    let meta = params.and_then(|params| params.get("_meta"));
    let carried = meta.and_then(|meta| {
        TraceContext::continued(
            meta.get("traceparent").and_then(Value::as_str),
            meta.get("tracestate").and_then(Value::as_str),
        )
    });
    let entry = Entry {
        answer: answer.as_ref(),
        trace: carried.as_ref().unwrap_or(entry.trace),
        ..*entry
    };
    let invocation = app.invoke(&entry, name, body.as_bytes()).await;
    shape(app, name, id, invocation, can_elicit(params))
}

/// A person's answer carried by a retried `tools/call`: MCP 2026-07-28's
/// `requestState` + `inputResponses`, or a 2025-11-25 client's
/// `_meta["io.draftline/confirm"]` (see [`crate::confirm`]).
fn answer_of(params: Option<&Map<String, Value>>) -> Option<Result<Answer, ToolError>> {
    let params = params?;
    if let Some(state) = params.get("requestState") {
        let Some(state) = state.as_str() else {
            return Some(Answer::parse(""));
        };
        let response = params
            .get("inputResponses")
            .and_then(|responses| responses.get(confirm::ELICITATION_KEY));
        let action = response.and_then(|r| r.get("action")).and_then(Value::as_str);
        let decision = response
            .and_then(|r| r.get("content"))
            .and_then(|c| c.get("decision"))
            .and_then(Value::as_str);
        return Some(match (action, decision) {
            (Some("accept"), Some("create_another")) => Ok(Answer::CreateAnother(state.to_owned())),
            (Some("accept"), Some("use_existing")) => Ok(Answer::UseExisting(state.to_owned())),
            (Some("decline" | "cancel"), _) => Ok(Answer::Declined),
            _ => Err(ToolError::invalid_schema(
                format!("inputResponses.{}", confirm::ELICITATION_KEY),
                "the retried call carries a requestState but no accepted answer to the elicitation (decision \
                 create_another or use_existing). Nothing was created.",
            )),
        });
    }
    let confirmation = params.get("_meta")?.get(confirm::META_KEY)?;
    Some(confirmation.as_str().map_or_else(|| Answer::parse(""), Answer::parse))
}

/// Whether the client said it can elicit (MCP 2026-07-28 capabilities in `_meta`).
fn can_elicit(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"))
        .and_then(|c| c.get("elicitation"))
        .is_some_and(|e| !e.is_null())
}

/// The MCP 2026-07-28 input-required result of a question.
fn input_required(prompt: &str, state: &str) -> Value {
    json!({
        "resultType": "input_required",
        "inputRequests": {
            (confirm::ELICITATION_KEY): {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": prompt,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "decision": {
                                "type": "string",
                                "title": "What should happen?",
                                "oneOf": [
                                    {"const": "create_another", "title": "Create another draft anyway"},
                                    {"const": "use_existing", "title": "Use the existing draft"}
                                ]
                            }
                        },
                        "required": ["decision"]
                    }
                }
            }
        },
        "requestState": state
    })
}

/// Turns the pipeline's answer into the MCP one. A question goes out as an
/// input-required result when the client can elicit on 2026-07-28, else as
/// an `isError` result whose text says how to confirm.
fn shape(app: &App, name: &str, id: &RequestId, invocation: Invocation, elicit: bool) -> Called {
    let Invocation { request_id, result } = invocation;
    match result {
        Err(ToolError::InputRequired {
            question,
            request_state: Some(state),
            ..
        }) if elicit => Called::Result {
            result: input_required(&question.prompt, &state),
            request_id,
        },
        Ok(success) => {
            let text = success.data.to_string();
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(success.data);
            result.meta = Some(
                Map::from_iter([
                    ("replayed".to_owned(), json!(success.replayed)),
                    ("requestId".to_owned(), json!(request_id)),
                ])
                .into(),
            );
            Called::Result {
                result: encode(&result),
                request_id,
            }
        }
        Err(error @ ToolError::Unauthenticated(_)) => Called::Unauthenticated { error, request_id },
        Err(ToolError::NotFound(_)) if app.registry().get(name).is_none() => Called::Protocol {
            error: ProtocolError::invalid_params(
                StatusCode::OK,
                Some(id.clone()),
                format!(
                    "Unknown tool: '{}'. Call tools/list for the tools you may use and call one by its exact name.",
                    name.chars().take(64).collect::<String>()
                ),
            ),
            request_id: Some(request_id),
        },
        Err(error) => {
            let object = response::error_object(&error);
            let mut result = CallToolResult::error(vec![
                ContentBlock::text(error.public_message()),
                ContentBlock::text(object.to_string()),
            ]);
            result.meta = Some(
                Map::from_iter([
                    ("replayed".to_owned(), json!(false)),
                    ("requestId".to_owned(), json!(request_id)),
                    ("error".to_owned(), object),
                ])
                .into(),
            );
            Called::Result {
                result: encode(&result),
                request_id,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draftline_contract::tool::Tier;

    fn definition(name: &'static str) -> ToolDefinition {
        ToolDefinition {
            name,
            title: name,
            description: "d",
            module: "m",
            tier: Tier::Read,
            scope: "m:read",
            input_schema: json!({"type": "object"}),
            output_schema: json!({"type": "object"}),
            annotations: Tier::Read.annotations(),
        }
    }

    #[test]
    fn pages_follow_each_other_until_the_last_has_no_cursor() {
        let all: Vec<ToolDefinition> = ["a_x", "b_x", "c_x", "d_x", "e_x"]
            .into_iter()
            .map(definition)
            .collect();
        let tools: Vec<&ToolDefinition> = all.iter().collect();
        let mut seen = Vec::new();
        let mut after: Option<String> = None;
        let mut pages = 0;
        loop {
            let (shown, next) = page(&tools, after.as_deref(), 2);
            pages += 1;
            seen.extend(shown.iter().map(|t| t.name));
            match next {
                Some(cursor) => after = Some(read_cursor(&cursor).unwrap()),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, ["a_x", "b_x", "c_x", "d_x", "e_x"]);
        // A page that ends exactly at the end has no cursor.
        let (shown, next) = page(&tools, Some("c_x"), 2);
        assert_eq!(shown.len(), 2);
        assert_eq!(next, None);
    }

    #[test]
    fn a_cursor_is_opaque_and_only_ours_are_read() {
        let cursor = cursor_after("b_x");
        assert!(!cursor.contains("b_x"));
        assert_eq!(read_cursor(&cursor).as_deref(), Some("b_x"));
        assert_eq!(read_cursor("not a cursor"), None);
        assert_eq!(read_cursor(&URL_SAFE_NO_PAD.encode("before:b_x")), None);
        assert_eq!(read_cursor(&cursor_after("")), None);
    }

    #[test]
    fn a_cursor_after_a_removed_tool_continues_where_it_would_have_been() {
        let all: Vec<ToolDefinition> = ["a_x", "c_x"].into_iter().map(definition).collect();
        let tools: Vec<&ToolDefinition> = all.iter().collect();
        let (shown, _) = page(&tools, Some("b_x"), 50);
        assert_eq!(shown.iter().map(|t| t.name).collect::<Vec<_>>(), ["c_x"]);
    }
}
