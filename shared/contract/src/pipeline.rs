//! The request pipeline: one path for every tool call, in the order of
//! DESIGN.md: request id → authenticate → resolve tool and check scope →
//! (spend the caller's budget, when one is configured) → parse JSON →
//! validate → idempotency → execute → audit → respond.
//!
//! [`App`] holds what a warm instance builds once (registry, authenticator,
//! DynamoDB client, clock, configuration) and serves
//! `http::Request<Bytes>` → `http::Response<Bytes>`, so the same code runs
//! under Vercel, AWS Lambda, the local server and the tests. Each step fails
//! with a [`ToolError`]; nothing below a failed step runs; the audit record
//! is written whatever happened.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::audit::{AuditRecord, Outcome};
use crate::auth::Authenticator;
use crate::canonical;
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::cursor::{CursorKey, KeySource};
use crate::dynamo::{Db, counting_round_trips};
use crate::error::ToolError;
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyRecord, IdempotencyStore, Resolution};
use crate::identity::Caller;
use crate::request::{self, AgentContext};
use crate::response;
use crate::tool::{Call, Effect, ErasedTool, ParsedInput, Registry, RuleContext, Tier};

/// How many times a draft is prepared again when its transaction loses a
/// race on a document item (not on its key).
const DRAFT_ATTEMPTS: usize = 3;

/// How a call arrived; decides where a draft's key may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A tool function: `Idempotency-Key`, else `X-Agent-Run-Id` + `client_ref`.
    Http,
    /// The MCP endpoint: as HTTP, else the user + `client_ref`.
    Mcp,
}

impl Transport {
    fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Mcp => "mcp",
        }
    }
}

/// A successful call.
#[derive(Debug, Clone, PartialEq)]
pub struct Success {
    /// 200 or 201.
    pub status: StatusCode,
    /// The data.
    pub data: Value,
    /// Whether it is a stored response sent again.
    pub replayed: bool,
}

/// What a call produced, with its request id.
#[derive(Debug)]
pub struct Invocation {
    /// The request id.
    pub request_id: String,
    /// The result.
    pub result: Result<Success, ToolError>,
}

/// Everything a warm instance builds once.
pub struct App {
    registry: Registry,
    auth: Authenticator,
    db: Db,
    clock: Arc<dyn Clock>,
    config: Config,
    cursors: CursorKey,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl App {
    /// Builds the app for `config`, connecting to DynamoDB.
    pub async fn new(registry: Registry, config: Config) -> Self {
        let db = Db::connect(&config).await;
        Self::with_parts(registry, config, db, Arc::new(SystemClock))
    }

    /// Builds the app from parts (tests inject a clock).
    pub fn with_parts(registry: Registry, config: Config, db: Db, clock: Arc<dyn Clock>) -> Self {
        let cursors = CursorKey::from_config(&config);
        if cursors.source() == KeySource::PublicFacts {
            tracing::warn!(
                "DRAFTLINE_CURSOR_SECRET is not set and there is no JWT secret: pagination cursors are sealed \
                 with a key derived from public settings (they still cannot leave the caller's branch)"
            );
        }
        Self {
            auth: Authenticator::new(&config),
            cursors,
            registry,
            db,
            clock,
            config,
        }
    }

    /// The tools.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The table.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// The authenticator.
    pub fn authenticator(&self) -> &Authenticator {
        &self.auth
    }

    /// The RFC 9728 metadata URL named in `WWW-Authenticate`.
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource", self.config.resource)
    }

    /// The RFC 9728 protected resource metadata of this deployment.
    pub fn protected_resource_metadata(&self) -> Value {
        let mut scopes: Vec<&str> = self.registry.all().map(|t| t.scope).collect();
        scopes.sort_unstable();
        scopes.dedup();
        json!({
            "resource": self.config.resource,
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": scopes,
            "resource_name": "draftline ERP tools",
        })
    }

    /// Serves one HTTP request to the tool function `tool`.
    pub async fn handle_tool(&self, tool: &str, request: Request<Bytes>) -> Response<Bytes> {
        let (parts, body) = request.into_parts();
        if parts.method != Method::POST {
            let message = format!(
                "{tool} is called with POST and a JSON body; {} is not allowed.",
                parts.method
            );
            return response::method_not_allowed("POST", message, &request::request_id(&parts.headers));
        }
        let invocation = self.invoke(tool, &parts.headers, &body, Transport::Http).await;
        self.render(&invocation)
    }

    /// The HTTP response for an invocation.
    pub fn render(&self, invocation: &Invocation) -> Response<Bytes> {
        match &invocation.result {
            Ok(success) => response::success(success.status, &success.data, success.replayed, &invocation.request_id),
            Err(err) => response::failure(err, &invocation.request_id, &self.resource_metadata_url()),
        }
    }

    /// Authenticates a request (for endpoints that list rather than call tools).
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ToolError> {
        self.auth.authenticate(headers).await
    }

    /// Runs the whole pipeline for one call of `tool` with `body` as its input.
    pub async fn invoke(&self, tool: &str, headers: &HeaderMap, body: &[u8], transport: Transport) -> Invocation {
        self.invoke_with(None, tool, headers, body, transport).await
    }

    /// [`invoke`](Self::invoke) for a caller an endpoint has already
    /// authenticated from these `headers` (the MCP endpoint), so the token is
    /// not verified twice.
    pub async fn invoke_verified(
        &self,
        caller: &Caller,
        tool: &str,
        headers: &HeaderMap,
        body: &[u8],
        transport: Transport,
    ) -> Invocation {
        self.invoke_with(Some(caller), tool, headers, body, transport).await
    }

    async fn invoke_with(
        &self,
        verified: Option<&Caller>,
        tool: &str,
        headers: &HeaderMap,
        body: &[u8],
        transport: Transport,
    ) -> Invocation {
        let started = Instant::now();
        let request_id = request::request_id(headers);
        let mut audit = AuditRecord::begin(&request_id, tool, transport.as_str(), self.clock.now());
        let ((result, audit_failure), round_trips) = counting_round_trips(async {
            let result = self.steps(verified, tool, headers, body, transport, &mut audit).await;
            let audit_failure = self.finish_audit(&mut audit, &result).await;
            (result, audit_failure)
        })
        .await;
        let result = match (result, audit_failure) {
            // A result that could not be recorded is not handed out.
            (Ok(_), Some(err)) => Err(err),
            (result, _) => result,
        };
        log_call(&request_id, tool, &audit, &result, started.elapsed(), round_trips);
        Invocation { request_id, result }
    }

    /// Writes the audit item unless the draft transaction already did.
    /// Returns the error to answer with if a successful result could not be recorded.
    async fn finish_audit(&self, audit: &mut AuditRecord, result: &Result<Success, ToolError>) -> Option<ToolError> {
        match result {
            Ok(success) if success.status == StatusCode::CREATED => return None,
            Ok(success) => {
                audit.http_status = success.status.as_u16();
                audit.outcome = if success.replayed {
                    Outcome::Replayed
                } else {
                    Outcome::Ok
                };
            }
            Err(err) => {
                audit.http_status = err.status().as_u16();
                audit.code = Some(err.code().as_str());
                audit.outcome = if err.is_denial() {
                    Outcome::Denied
                } else {
                    Outcome::ToolError
                };
            }
        }
        match audit.write(&self.db).await {
            Ok(()) => None,
            Err(err) => {
                tracing::error!(request_id = %audit.request_id, error = %err, "audit item not written");
                result.is_ok().then_some(err)
            }
        }
    }

    async fn steps(
        &self,
        verified: Option<&Caller>,
        tool_name: &str,
        headers: &HeaderMap,
        body: &[u8],
        transport: Transport,
        audit: &mut AuditRecord,
    ) -> Result<Success, ToolError> {
        // Read leniently first so even a denied call's audit item names its run.
        let agent = AgentContext::from_headers(headers);
        audit.agent = agent.as_ref().cloned().unwrap_or_default();

        let caller = match verified {
            Some(caller) => caller.clone(),
            None => self.auth.authenticate(headers).await?,
        };
        audit.caller = Some(caller.clone());

        let tool = self.registry.get(tool_name).ok_or_else(|| {
            ToolError::NotFound(format!(
                "There is no tool named '{}'. Nothing was read or written. List the available tools and call one of them by its exact name.",
                tool_name.chars().take(64).collect::<String>()
            ))
        })?;
        let definition = tool.definition();
        if !caller.scopes().grants(definition.scope) {
            return Err(ToolError::Forbidden {
                scope: definition.scope.to_owned(),
                message: format!(
                    "Tool {} needs the scope '{}', which your access token does not grant (granted: {}). \
                     Nothing was read or written. Do not retry; ask a person who has '{}' to do this, \
                     or use a tool your scopes allow.",
                    definition.name,
                    definition.scope,
                    if caller.scopes().iter().next().is_none() {
                        "none".to_owned()
                    } else {
                        caller.scopes().to_string()
                    },
                    definition.scope
                ),
            });
        }
        if let Some(limit) = self.config.rate_limit_per_minute {
            crate::budget::spend(&self.db, &caller, self.clock.now(), limit).await?;
        }
        let agent = agent?;
        let idempotency_header = request::idempotency_header(headers)?;
        let rules = RuleContext {
            today: self.clock.now().date_naive(),
        };
        let input = tool.parse(body, &rules)?;
        let call = Call {
            caller: &caller,
            db: &self.db,
            clock: self.clock.as_ref(),
            agent: &agent,
            request_id: &audit.request_id.clone(),
            cursors: &self.cursors,
        };
        match definition.tier {
            Tier::Read => match tool.run(&call, &input).await? {
                Effect::Read(data) => Ok(Success {
                    status: StatusCode::OK,
                    data,
                    replayed: false,
                }),
                Effect::Draft(_) => Err(ToolError::internal("a read tool produced a draft")),
            },
            Tier::Draft => {
                let key = draft_key(idempotency_header, &agent, &caller, &input, transport)?;
                self.draft(tool.as_ref(), &call, &input, key, audit).await
            }
        }
    }

    /// The idempotent draft path.
    async fn draft(
        &self,
        tool: &dyn ErasedTool,
        call: &Call<'_>,
        input: &ParsedInput,
        key: IdempotencyKey,
        audit: &mut AuditRecord,
    ) -> Result<Success, ToolError> {
        let name = tool.definition().name;
        let fingerprint = canonical::fingerprint(name, &input.canonical);
        let owner = format!("{}/{}", call.caller.branch(), call.caller.user());
        audit.idempotency_key = Some(key.to_string());
        audit.fingerprint = Some(fingerprint.clone());
        let store = IdempotencyStore::new(&self.db, call.caller.tenant());

        // One read answers every retry: replay, conflict or in flight.
        if let Some(record) = store.lookup(&key).await? {
            if let Some(answer) = self.answer_from_record(&record, &key, &fingerprint, &owner, audit) {
                return answer;
            }
        }
        for attempt in 0..DRAFT_ATTEMPTS {
            let Effect::Draft(draft) = tool.run(call, input).await? else {
                return Err(ToolError::internal("a draft tool produced a read"));
            };
            let now = self.clock.now();
            let record = IdempotencyRecord::completed(
                name,
                &fingerprint,
                &owner,
                StatusCode::CREATED.as_u16(),
                &draft.output,
                Some(&draft.document),
                call.request_id,
                now,
                self.config.idempotency_ttl,
            );
            audit.document = Some((&draft.document).into());
            audit.outcome = Outcome::Ok;
            audit.http_status = StatusCode::CREATED.as_u16();
            let mut items = Vec::with_capacity(draft.writes.len() + 2);
            items.push(store.put_record(&key, &record, now)?);
            items.extend(draft.writes);
            items.push(audit.put(&self.db)?);
            match store
                .commit(items, &format!("{}#{}#{attempt}", key, call.request_id))
                .await
            {
                Ok(()) => {
                    return Ok(Success {
                        status: StatusCode::CREATED,
                        data: draft.output,
                        replayed: false,
                    });
                }
                Err(CommitFailure::KeyTaken(Some(record))) => {
                    audit.document = None;
                    if let Some(answer) = self.answer_from_record(&record, &key, &fingerprint, &owner, audit) {
                        return answer;
                    }
                }
                Err(CommitFailure::KeyTaken(None)) => {
                    audit.document = None;
                    return Err(in_flight(&key, 1));
                }
                Err(CommitFailure::Contention) => {
                    audit.document = None;
                    tokio::time::sleep(Duration::from_millis(5 + 20 * attempt as u64)).await;
                }
                Err(CommitFailure::Store(err)) => {
                    audit.document = None;
                    return Err(err);
                }
            }
        }
        Err(in_flight(&key, 1))
    }

    /// What a stored record answers; `None` if the key is free after all.
    fn answer_from_record(
        &self,
        record: &IdempotencyRecord,
        key: &IdempotencyKey,
        fingerprint: &str,
        owner: &str,
        audit: &mut AuditRecord,
    ) -> Option<Result<Success, ToolError>> {
        match record.resolve(fingerprint, owner, self.clock.now()) {
            Resolution::Replay {
                http_status: _,
                data,
                document,
            } => {
                audit.document = document.map(|(id, number, kind)| crate::audit::AuditDocument { id, number, kind });
                Some(Ok(Success {
                    status: StatusCode::OK,
                    data,
                    replayed: true,
                }))
            }
            Resolution::Mismatch => Some(Err(ToolError::KeyReused(format!(
                "Idempotency key '{key}' was already used for a different request (other arguments, another tool \
                 or another user). No draft was created. If you are retrying, resend exactly the original \
                 arguments; if this is a new draft, use a new key (or a new client_ref)."
            )))),
            Resolution::InFlight(after) => Some(Err(in_flight(key, after))),
            Resolution::Vacant => None,
        }
    }
}

fn in_flight(key: &IdempotencyKey, after: u64) -> ToolError {
    ToolError::InFlight {
        message: format!(
            "A call with idempotency key '{key}' is still being processed. No second draft was created. \
             Retry this same call unchanged in {after} second(s) to get its result."
        ),
        retry_after_seconds: after,
    }
}

fn draft_key(
    header: Option<IdempotencyKey>,
    agent: &AgentContext,
    caller: &Caller,
    input: &ParsedInput,
    transport: Transport,
) -> Result<IdempotencyKey, ToolError> {
    if let Some(key) = header {
        return Ok(key);
    }
    let client_ref = input.client_ref.as_deref().unwrap_or_default();
    let derived = match (&agent.run_id, transport) {
        (Some(run), _) => Some(IdempotencyKey::from_run(run, client_ref)),
        (None, Transport::Mcp) => Some(IdempotencyKey::from_client_ref(caller.user().as_str(), client_ref)),
        (None, Transport::Http) => None,
    };
    match derived {
        Some(key) => key.map_err(|reason| ToolError::invalid("header:X-Agent-Run-Id", reason)),
        None => Err(ToolError::invalid(
            "header:Idempotency-Key",
            "A draft needs an idempotency key so that a retry cannot create a second document. Send an \
             'Idempotency-Key' header (a new unique value per intended draft, the same value when you retry), \
             or an 'X-Agent-Run-Id' header, which is combined with client_ref. No draft was created.",
        )),
    }
}

/// The one structured log line per call: no token, no arguments.
fn log_call(
    request_id: &str,
    tool: &str,
    audit: &AuditRecord,
    result: &Result<Success, ToolError>,
    elapsed: Duration,
    round_trips: u64,
) {
    let duration_ms = elapsed.as_secs_f64() * 1000.0;
    let tool = tool.chars().take(64).collect::<String>();
    match result {
        Ok(success) => tracing::info!(
            request_id,
            tool,
            outcome = if success.replayed { "replayed" } else { "ok" },
            status = success.status.as_u16(),
            duration_ms,
            dynamodb_round_trips = round_trips,
            replayed = success.replayed,
            agent_run_id = audit.agent.run_id.as_deref(),
            "tool call"
        ),
        Err(err) if err.status().is_server_error() => tracing::error!(
            request_id,
            tool,
            outcome = "tool_error",
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
            tool,
            outcome = if err.is_denial() { "denied" } else { "tool_error" },
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
