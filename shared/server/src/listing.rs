//! The caller's tool list in every format a client needs, built from the
//! same [`ToolDefinition`]s (so a tool the caller may not use appears in none):
//!
//! - [`mcp_tool`]: one entry of MCP `tools/list`;
//! - [`openai_tools`]: OpenAI function tools (strict), grouped into one
//!   namespace per module with `defer_loading`, plus `tool_search`;
//! - [`ai_sdk_document`]: what `clients/ai-sdk` turns into Vercel AI SDK tools;
//! - [`openapi`]: an OpenAPI 3.1 document of the tool functions for plain HTTPS callers.

use serde_json::{Value, json};

use draftline_contract::identity::Scopes;
use draftline_contract::tool::{Registry, Tier, ToolDefinition};

/// One tool as MCP `tools/list` presents it.
pub fn mcp_tool(def: &ToolDefinition) -> Value {
    let a = def.annotations;
    json!({
        "name": def.name,
        "title": def.title,
        "description": def.description,
        "inputSchema": def.input_schema,
        "outputSchema": def.output_schema,
        "annotations": {
            "title": def.title,
            "readOnlyHint": a.read_only_hint,
            "destructiveHint": a.destructive_hint,
            "idempotentHint": a.idempotent_hint,
            "openWorldHint": a.open_world_hint,
        },
    })
}

/// OpenAI function tools for the caller: one namespace per module (its
/// description says what the module cannot do), every function strict and
/// deferred, and the `tool_search` tool that loads them.
pub fn openai_tools(registry: &Registry, scopes: &Scopes) -> Value {
    let mut namespaces = Vec::new();
    for module in registry.modules() {
        let functions: Vec<Value> = registry
            .visible_to(scopes)
            .filter(|d| d.module == module.name)
            .map(|d| {
                json!({
                    "type": "function",
                    "name": d.name,
                    "description": d.description,
                    "parameters": openai_parameters(&d.input_schema),
                    "strict": true,
                    "defer_loading": true,
                })
            })
            .collect();
        if !functions.is_empty() {
            namespaces.push(json!({
                "type": "namespace",
                "name": module.name,
                "description": module.description,
                "tools": functions,
            }));
        }
    }
    if !namespaces.is_empty() {
        namespaces.push(json!({"type": "tool_search"}));
    }
    json!({ "tools": namespaces })
}

/// The keywords OpenAI's strict mode does not take (string lengths); every
/// other keyword of the input schema (pattern, format, ranges, item counts)
/// stays, and the server enforces the rest.
const NOT_IN_OPENAI_STRICT: [&str; 2] = ["minLength", "maxLength"];

fn openai_parameters(schema: &Value) -> Value {
    /// Removes the keywords from one schema and from every schema inside it.
    fn strip(schema: &mut Value) {
        let Some(map) = schema.as_object_mut() else { return };
        for keyword in NOT_IN_OPENAI_STRICT {
            map.remove(keyword);
        }
        for (keyword, value) in map.iter_mut() {
            match (keyword.as_str(), value) {
                ("properties" | "$defs" | "definitions", Value::Object(schemas)) => {
                    schemas.values_mut().for_each(strip)
                }
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(schemas)) => {
                    schemas.iter_mut().for_each(strip)
                }
                ("items" | "additionalProperties" | "not", inner @ Value::Object(_)) => strip(inner),
                _ => {}
            }
        }
    }
    let mut schema = schema.clone();
    strip(&mut schema);
    schema
}

/// The document `clients/ai-sdk` consumes: every tool the caller may use,
/// with the URL to POST its input to.
pub fn ai_sdk_document(registry: &Registry, scopes: &Scopes, resource: &str) -> Value {
    let tools: Vec<Value> = registry
        .visible_to(scopes)
        .map(|d| {
            json!({
                "name": d.name,
                "title": d.title,
                "description": d.description,
                "module": d.module,
                "tier": d.tier,
                "inputSchema": d.input_schema,
                "outputSchema": d.output_schema,
                "url": format!("{resource}/api/{}", d.name),
            })
        })
        .collect();
    json!({ "version": 1, "resource": resource, "tools": tools })
}

/// An OpenAPI 3.1 document of the tool functions the caller may use.
pub fn openapi(registry: &Registry, scopes: &Scopes, resource: &str) -> Value {
    let error_ref = json!({"$ref": "#/components/responses/Error"});
    let mut paths = serde_json::Map::new();
    for d in registry.visible_to(scopes) {
        let mut parameters = executor_headers();
        let mut responses = serde_json::Map::new();
        let replayed = "The stored draft, replayed (header Idempotent-Replayed: true).";
        let ok = if d.tier == Tier::Draft { replayed } else { "The result." };
        responses.insert("200".into(), ok_response(d, ok));
        if d.tier == Tier::Draft {
            parameters.push(header_param(
                "Draftline-Confirm",
                "A person's answer to an INPUT_REQUIRED question about this same call: 'create-another <requestState>' \
                 or 'use-existing <requestState>', with the requestState of the question unchanged.",
                &json!({"type": "string", "pattern": format!(
                    "^(create-another|use-existing) [!-~]{{1,{}}}$",
                    crate::confirm::MAX_STATE_LEN
                )}),
            ));
            parameters.insert(
                0,
                header_param(
                    "Idempotency-Key",
                    "1-255 printable ASCII, as an RFC 8941 string (quotes optional); the same key on a retry returns \
                     the same draft. A draft needs this header unless X-Agent-Run-Id is sent (then the key is \
                     <X-Agent-Run-Id>:<client_ref>); with neither, the call is refused with a detail of kind rule.",
                    &json!({"type": "string", "pattern": crate::idempotency::key::HEADER_PATTERN}),
                ),
            );
            responses.insert("201".into(), ok_response(d, "The draft was created."));
            responses.insert("409".into(), error_ref.clone());
            responses.insert("422".into(), error_ref.clone());
        }
        for status in ["400", "401", "403", "404", "429", "503"] {
            responses.insert(status.into(), error_ref.clone());
        }
        paths.insert(
            format!("/api/{}", d.name),
            json!({
                "post": {
                    "operationId": d.name,
                    "summary": d.title,
                    "description": d.description,
                    "tags": [d.module],
                    "security": [{"bearer": [d.scope]}],
                    "parameters": parameters,
                    "requestBody": {"required": true, "content": {"application/json": {"schema": as_accepted(&d.input_schema)}}},
                    "responses": responses,
                }
            }),
        );
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "draftline ERP tools",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "One business action per function. Read tools never write; draft tools create documents in status draft and are idempotent."
        },
        "servers": [{"url": resource}],
        "tags": registry.modules().iter().map(|m| json!({"name": m.name, "description": m.description})).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
            "responses": {
                "Error": {
                    "description": "A model-readable error: what failed, allowed values, what to do next, what did not happen.",
                    "content": {"application/json": {"schema": error_envelope_schema()}}
                }
            }
        }
    })
}

/// The headers every tool function reads from its executor, each
/// optional, recorded in the call's audit item.
fn executor_headers() -> Vec<Value> {
    let id = json!({"type": "string", "pattern": draftline_contract::request::ID_HEADER_PATTERN});
    let text = json!({"type": "string"});
    vec![
        header_param(
            "X-Agent-Run-Id",
            "The agent run this call belongs to; with client_ref it forms the idempotency key of a draft.",
            &id,
        ),
        header_param(
            "X-Tool-Call-Id",
            "The executor's tool-call id, recorded in the audit item.",
            &id,
        ),
        header_param(
            "X-Agent-Model",
            "The model that chose the call, recorded in the audit item (printable ASCII, at most 128 characters kept; other values are dropped, never refused).",
            &text,
        ),
        header_param(
            "X-Prompt-Version",
            "The prompt version, recorded in the audit item (kept like X-Agent-Model).",
            &text,
        ),
        header_param(
            "X-Request-Id",
            "Kept as the request id if 1-64 of [A-Za-z0-9._-], otherwise replaced (never refused).",
            &text,
        ),
        header_param(
            "X-Tool-Approval",
            "What a person decided before this call, recorded in the audit item: approved, or not-required when the tool's policy asks nobody. A denied call is not sent at all.",
            &json!({"type": "string", "enum": ["approved", "not-required"]}),
        ),
        header_param(
            "X-Tool-Approval-Reason",
            "The approver's reason, percent-encoded UTF-8 (encodeURIComponent) without control characters, at most 500 characters once decoded; recorded in the audit item. The pattern is exactly what is accepted.",
            &json!({"type": "string", "pattern": draftline_contract::request::APPROVAL_REASON_PATTERN}),
        ),
    ]
}

fn header_param(name: &str, description: &str, schema: &Value) -> Value {
    json!({"name": name, "in": "header", "required": false, "description": description, "schema": schema})
}

/// A strict input schema as the server accepts it: a property that may be
/// `null` may also be left out (it means the same), so it is not `required`.
/// The strict form (every property required) is what model-facing formats
/// need; this one is the HTTP contract.
fn as_accepted(schema: &Value) -> Value {
    let mut schema = schema.clone();
    relax(&mut schema);
    schema
}

fn nullable(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(Value::String(t)) => t == "null",
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|variants| variants.iter().any(nullable)),
    }
}

fn relax(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if let (Some(Value::Object(properties)), Some(Value::Array(required))) =
        (object.get("properties"), object.get("required"))
    {
        let kept: Vec<Value> = required
            .iter()
            .filter(|name| {
                name.as_str()
                    .and_then(|n| properties.get(n))
                    .is_none_or(|property| !nullable(property))
            })
            .cloned()
            .collect();
        object.insert("required".to_owned(), Value::Array(kept));
    }
    for value in object.values_mut() {
        match value {
            Value::Object(_) => relax(value),
            Value::Array(items) => items.iter_mut().for_each(relax),
            _ => {}
        }
    }
}

fn ok_response(def: &ToolDefinition, description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {
                "ok": {"const": true},
                "data": def.output_schema,
                "replayed": {"type": "boolean"},
                "requestId": {"type": "string"}
            },
            "required": ["ok", "data", "replayed", "requestId"]
        }}}
    })
}

fn error_envelope_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ok": {"const": false},
            "error": {
                "type": "object",
                "properties": {
                    "code": {"enum": ["VALIDATION_ERROR", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "INPUT_REQUIRED", "DECLINED", "RATE_LIMITED", "LIMIT_REACHED", "DEPENDENCY_UNAVAILABLE", "INTERNAL_ERROR"]},
                    "inputRequired": {
                        "type": "object",
                        "description": "With INPUT_REQUIRED: the open agent draft this call would duplicate, and how to send a person's answer (resend the same call with the Draftline-Confirm header).",
                        "properties": {
                            "question": {"type": "string"},
                            "existing": {"type": "object"},
                            "choices": {"type": "array", "items": {"enum": ["create_another", "use_existing"]}},
                            "requestState": {"type": "string"},
                            "confirm": {"type": "object"}
                        },
                        "required": ["question", "existing", "choices", "requestState", "confirm"]
                    },
                    "limit": {
                        "type": "object",
                        "description": "With LIMIT_REACHED: the limit of the tenant's policy this call would pass, what is used, what this call would add and when it resets.",
                        "properties": {
                            "name": {"type": "string"},
                            "unit": {"type": "string"},
                            "appliesTo": {"type": "string"},
                            "max": {"type": "string"},
                            "used": {"type": "string"},
                            "thisCall": {"type": "string"},
                            "resetsAt": {"type": ["string", "null"]},
                            "policyVersion": {"type": "integer"}
                        },
                        "required": ["name", "unit", "appliesTo", "max", "used", "thisCall", "resetsAt", "policyVersion"]
                    },
                    "message": {"type": "string"},
                    "retryable": {"type": "boolean"},
                    "details": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}, "message": {"type": "string"}, "kind": {"enum": ["schema", "rule"], "description": "schema: the value breaks this document's schema; rule: a rule the schema cannot express (data, date, other fields)."}}, "required": ["path", "message", "kind"]}},
                    "retryAfterSeconds": {"type": "integer"}
                },
                "required": ["code", "message", "retryable"]
            },
            "requestId": {"type": "string"}
        },
        "required": ["ok", "error", "requestId"]
    })
}

/// The formats `GET /api/tools?format=` serves.
const FORMATS: &str = "ai-sdk, mcp, openai, openapi";

/// `GET /api/tools?format=ai-sdk|mcp|openai|openapi`: the caller's tools.
pub async fn handle(app: &crate::App, request: crate::edge::Admitted) -> http::Response<bytes::Bytes> {
    use http::StatusCode;

    use crate::response;
    use draftline_contract::error::ToolError;

    let request_id = request.request_id();
    if let Err(err) = request.origin() {
        return response::failure(&err, request_id, &app.resource_metadata_url());
    }
    if request.parts.method != http::Method::GET {
        return response::method_not_allowed("GET", "The tool list is read with GET.".to_owned(), request_id);
    }
    let parts = &request.parts;
    let caller = match app.identify(&parts.headers).await {
        Ok(caller) => caller,
        Err(err) => return response::failure(&err, request_id, &app.resource_metadata_url()),
    };
    let format = parts
        .uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("format="))
        .unwrap_or("ai-sdk");
    let registry = app.registry();
    let scopes = caller.scopes();
    let resource = &app.config().resource;
    let body = match format {
        "ai-sdk" => ai_sdk_document(registry, scopes, resource),
        "mcp" => json!({"tools": registry.visible_to(scopes).map(mcp_tool).collect::<Vec<_>>()}),
        "openai" => openai_tools(registry, scopes),
        "openapi" => openapi(registry, scopes, resource),
        other => {
            let err = ToolError::invalid(
                "query:format",
                format!(
                    "'{}' is not a tool list format; allowed: {FORMATS}.",
                    other.chars().take(40).collect::<String>()
                ),
            );
            return response::failure(&err, request_id, &app.resource_metadata_url());
        }
    };
    response::json(StatusCode::OK, &body, request_id)
}
