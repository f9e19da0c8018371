//! The request pipeline: one path for every tool call, in the order of
//! DESIGN.md: request id → authenticate → resolve tool and check scope →
//! (spend the caller's budget, when one is configured) → parse JSON →
//! validate → idempotency → execute → audit → respond.
//!
//! The request id and the authentication are decided once at the edge and
//! arrive in an [`Entry`]. [`App`] holds what a warm instance builds once
//! (registry, authenticator, DynamoDB client, clock, configuration) and
//! serves `http::Request<Bytes>` → `http::Response<Bytes>`, so the same code
//! runs under Vercel, AWS Lambda, the local server and the tests. Each step
//! fails with a [`ToolError`]; nothing below a failed step runs. Every call
//! has a deadline below the platform's limit, and its audit item is built
//! once from its outcome: inside a draft's transaction when it creates one,
//! else by one append-only write afterwards. Calls refused before anyone was
//! identified go to the bounded [`AnonymousTrace`] instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::anonymous::{AnonymousTrace, UNKNOWN_TOOL};
use crate::audit::{Answered, AuditRecord, CallFacts, KeyFacts, Outcome, OutcomeKind};
use crate::auth::Authenticator;
use crate::config::Config;
use crate::confirm::{self, Answer};
use crate::edge::{self, Admitted};
use crate::idempotency::{
    Claim, CommitFailure, IdempotencyKey, IdempotencyRecord, IdempotencyStore, NextAction, StoredResponse,
};
use crate::pages::Pages;
use crate::response;
use draftline_contract::canonical;
use draftline_contract::clock::{Clock, SystemClock};
use draftline_contract::cursor::{CursorKey, KeySource};
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::request::AgentContext;
use draftline_contract::tool::{
    Call, Decision, DocumentRef, Draft, ErasedDraft, ExternalDraft, ParsedInput, Registered, Registry, RuleContext,
};
use draftline_dynamo::{Db, counting_round_trips};

/// How many times a draft is prepared again when its transaction loses a
/// race on a document item (its number was taken), not on its key.
const DRAFT_ATTEMPTS: usize = 3;

/// The part of a call's deadline kept for writing its audit item.
const AUDIT_RESERVE: Duration = Duration::from_millis(1500);

/// How a call arrived; decides where a draft's key may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A tool function: `Idempotency-Key`, else `X-Agent-Run-Id` + `client_ref`.
    Http,
    /// The MCP endpoint: as HTTP, else the caller's `client_ref`.
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

/// A request as it entered: its id and its authentication, each decided
/// once by the endpoint that received it.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The request id.
    pub request_id: &'a str,
    /// The request's headers (executor headers, idempotency key).
    pub headers: &'a HeaderMap,
    /// Who is calling, or why nobody could be identified.
    pub identity: &'a Result<Caller, ToolError>,
    /// How the call arrived.
    pub transport: Transport,
    /// How long the platform still lets the invocation run, if it says.
    pub time_left: Option<Duration>,
    /// A person's answer to an earlier question about this call, as it
    /// arrived (the `Draftline-Confirm` header, or MCP parameters).
    pub answer: Option<&'a Result<Answer, ToolError>>,
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
    /// The document the call created or replayed.
    pub document: Option<DocumentRef>,
}

/// What a call produced, with its request id.
#[derive(Debug)]
pub struct Invocation {
    /// The request id.
    pub request_id: String,
    /// The result.
    pub result: Result<Success, ToolError>,
}

/// What serving a call came to, before its audit item is written.
struct Served {
    result: Result<Success, ToolError>,
    /// The draft's key, once known.
    key: Option<KeyFacts>,
    /// The audit item was written in the draft's own transaction.
    audited: bool,
}

impl Served {
    fn unaudited(result: Result<Success, ToolError>, key: Option<KeyFacts>) -> Self {
        Self {
            result,
            key,
            audited: false,
        }
    }
}

/// What became of a call: named here once, for the audit item and the log
/// line alike.
fn outcome_kind(result: &Result<Success, ToolError>) -> OutcomeKind {
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
fn outcome<'a>(result: &'a Result<Success, ToolError>, key: Option<&'a KeyFacts>, authorized: bool) -> Outcome<'a> {
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

/// Everything a warm instance builds once.
pub struct App {
    registry: Registry,
    auth: Authenticator,
    db: Db,
    clock: Arc<dyn Clock>,
    config: Config,
    cursors: CursorKey,
    anonymous: AnonymousTrace,
    review_pages: String,
    pages: Option<Arc<dyn Pages>>,
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
        let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
        Self::with_parts(registry, config, db, Arc::new(SystemClock))
    }

    /// Builds the app from parts (tests inject a clock).
    pub fn with_parts(registry: Registry, config: Config, db: Db, clock: Arc<dyn Clock>) -> Self {
        let cursors = config.cursor_key();
        if cursors.source() == KeySource::PublicFacts {
            tracing::warn!(
                "DRAFTLINE_CURSOR_SECRET is not set and there is no JWT secret: pagination cursors are sealed \
                 with a key derived from public settings (they still cannot leave the caller's branch)"
            );
        }
        Self {
            auth: Authenticator::new(&config),
            cursors,
            review_pages: format!("{}/review", crate::auth::origin_of(&config.resource)),
            pages: None,
            registry,
            db,
            clock,
            config,
            anonymous: AnonymousTrace::new(),
        }
    }

    /// This app, also serving `pages` (the review pages) under their prefix.
    pub fn with_pages(mut self, pages: Arc<dyn Pages>) -> Self {
        self.pages = Some(pages);
        self
    }

    /// The pages this app serves besides the tools, if any.
    pub fn pages(&self) -> Option<&Arc<dyn Pages>> {
        self.pages.as_ref()
    }

    /// Where this deployment's review pages are (`<resource origin>/review`).
    pub fn review_pages(&self) -> &str {
        &self.review_pages
    }

    /// The key that seals this deployment's pagination cursors.
    pub fn cursors(&self) -> &CursorKey {
        &self.cursors
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

    /// Decides who is calling, once per request.
    pub async fn identify(&self, headers: &HeaderMap) -> Result<Caller, ToolError> {
        self.auth.authenticate(headers).await
    }

    /// Counts a call refused before anyone was identified.
    pub async fn trace_refusal(&self, tool: &str, err: &ToolError) {
        let tool = if self.registry.get(tool).is_some() {
            tool
        } else {
            UNKNOWN_TOOL
        };
        self.anonymous
            .record(&self.db, tool, err.refusal_reason(), self.clock.now())
            .await;
    }

    /// Serves one HTTP request to the tool function `tool`, in the edge's
    /// order: its origin verdict, then the method, then identity.
    pub async fn handle_tool(&self, tool: &str, request: Admitted) -> Response<Bytes> {
        let request_id = request.request_id().to_owned();
        if let Err(err) = request.origin() {
            let started = Instant::now();
            let ((), round_trips) = counting_round_trips(self.trace_refusal(tool, &err)).await;
            let result = Err(err);
            log_call(
                &request_id,
                tool,
                &AgentContext::default(),
                &result,
                started.elapsed(),
                round_trips,
            );
            let invocation = Invocation { request_id, result };
            return self.render(&invocation);
        }
        let time_left = request.time_left();
        let Admitted { parts, body, .. } = request;
        if parts.method != Method::POST {
            let message = format!(
                "{tool} is called with POST and a JSON body; {} is not allowed.",
                parts.method
            );
            return response::method_not_allowed("POST", message, &request_id);
        }
        let identity = self.identify(&parts.headers).await;
        let answer = parts
            .headers
            .get(confirm::HEADER)
            .map(|value| value.to_str().map_or_else(|_| Answer::parse(""), Answer::parse));
        let entry = Entry {
            request_id: &request_id,
            headers: &parts.headers,
            identity: &identity,
            transport: Transport::Http,
            time_left,
            answer: answer.as_ref(),
        };
        let invocation = self.invoke(&entry, tool, &body).await;
        self.render(&invocation)
    }

    /// The HTTP response for an invocation.
    pub fn render(&self, invocation: &Invocation) -> Response<Bytes> {
        match &invocation.result {
            Ok(success) => response::success(success.status, &success.data, success.replayed, &invocation.request_id),
            Err(err) => response::failure(err, &invocation.request_id, &self.resource_metadata_url()),
        }
    }

    /// Runs the whole pipeline for one call of `tool` with `body` as its input.
    pub async fn invoke(&self, entry: &Entry<'_>, tool: &str, body: &[u8]) -> Invocation {
        let started = Instant::now();
        let request_id = entry.request_id.to_owned();
        let facts = CallFacts {
            request_id: request_id.clone(),
            at: self.clock.now(),
            tool: tool.chars().take(64).collect(),
            transport: entry.transport.as_str(),
            agent: AgentContext::lenient(entry.headers),
            arguments: crate::audit::stored_arguments(body),
        };
        let caller = match entry.identity {
            Ok(caller) => caller,
            Err(err) => {
                let ((), round_trips) = counting_round_trips(self.trace_refusal(tool, err)).await;
                let result = Err(err.clone());
                log_call(&request_id, tool, &facts.agent, &result, started.elapsed(), round_trips);
                return Invocation { request_id, result };
            }
        };
        // The platform's own limit, less a margin to send the answer, caps ours.
        let deadline = entry.time_left.map_or(self.config.call_deadline, |left| {
            self.config
                .call_deadline
                .min(left.saturating_sub(Duration::from_millis(300)))
        });
        let work = deadline.saturating_sub(AUDIT_RESERVE.min(deadline / 4));
        // Set once the call passed the scope check, even if it then ran out of time.
        let authorized = AtomicBool::new(false);
        let (result, round_trips) = counting_round_trips(async {
            let serving = self.serve(caller, &facts, tool, body, entry, &authorized);
            let served = match tokio::time::timeout(work, serving).await {
                Ok(served) => served,
                Err(_elapsed) => {
                    let draft = matches!(self.registry.get(tool), Some(Registered::Draft(_)));
                    Served::unaudited(Err(ToolError::deadline(deadline, draft)), None)
                }
            };
            if served.audited {
                return served.result;
            }
            let authorized = authorized.load(Ordering::Relaxed);
            let record = AuditRecord::new(
                &facts,
                caller,
                &outcome(&served.result, served.key.as_ref(), authorized),
            );
            let written = tokio::time::timeout(
                deadline.saturating_sub(work).max(AUDIT_RESERVE / 3),
                record.write(&self.db),
            )
            .await
            .unwrap_or_else(|_| Err(ToolError::deadline(deadline, false)));
            match (served.result, written) {
                (result, Ok(())) => result,
                (Err(err), Err(audit)) => {
                    tracing::error!(request_id = %facts.request_id, error = %audit, "audit item not written");
                    Err(err)
                }
                // A result that could not be recorded is not handed out.
                (Ok(_), Err(audit)) => {
                    tracing::error!(request_id = %facts.request_id, error = %audit, "audit item not written");
                    Err(audit)
                }
            }
        })
        .await;
        log_call(&request_id, tool, &facts.agent, &result, started.elapsed(), round_trips);
        Invocation { request_id, result }
    }

    async fn serve(
        &self,
        caller: &Caller,
        facts: &CallFacts,
        name: &str,
        body: &[u8],
        entry: &Entry<'_>,
        authorized: &AtomicBool,
    ) -> Served {
        let tool = match self.authorize(caller, name).await {
            Ok(tool) => tool,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        authorized.store(true, Ordering::Relaxed);
        let agent = match AgentContext::from_headers(entry.headers) {
            Ok(agent) => agent,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        let call = Call {
            caller,
            clock: self.clock.as_ref(),
            agent: &agent,
            request_id: &facts.request_id,
            cursors: &self.cursors,
            draft_key: None,
            decision: None,
            near_duplicate_window: self.config.near_duplicate_window,
            review_pages: &self.review_pages,
        };
        match tool {
            Registered::Read(read) => {
                let result = async {
                    let input = read.parse(body)?;
                    read.check_rules(&input, &self.rules())?;
                    let data = read.read(&call, &input).await?;
                    Ok(Success {
                        status: StatusCode::OK,
                        data,
                        replayed: false,
                        document: None,
                    })
                }
                .await;
                Served::unaudited(result, None)
            }
            Registered::Draft(draft) => self.draft(draft.as_ref(), &call, facts, body, entry).await,
        }
    }

    /// Resolves the tool, checks the caller's scope and spends its budget.
    async fn authorize(&self, caller: &Caller, name: &str) -> Result<Registered, ToolError> {
        let tool = self.registry.get(name).cloned().ok_or_else(|| {
            ToolError::NotFound(format!(
                "There is no tool named '{}'. Nothing was read or written. List the available tools and call one of them by its exact name.",
                name.chars().take(64).collect::<String>()
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
            crate::budget::spend(&self.db, caller, self.clock.now(), limit).await?;
        }
        Ok(tool)
    }

    fn rules(&self) -> RuleContext {
        RuleContext {
            today: self.clock.now().date_naive(),
        }
    }

    /// The idempotent draft path.
    async fn draft(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        body: &[u8],
        entry: &Entry<'_>,
    ) -> Served {
        let keyed = async {
            let header = edge::idempotency_header(entry.headers)?;
            let input = tool.parse(body)?;
            let key = draft_key(header, call.agent, tool.client_ref(&input)?, entry.transport)?;
            let fingerprint = canonical::fingerprint(tool.definition().name, &input.canonical);
            Ok::<_, ToolError>((input, key, fingerprint))
        };
        let (input, key, fingerprint) = match keyed.await {
            Ok(keyed) => keyed,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        let facts_of_key = KeyFacts {
            key: key.to_string(),
            fingerprint,
            answered: None,
        };
        self.draft_with_key(tool, call, facts, &input, &key, facts_of_key, entry.answer)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn draft_with_key(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        input: &ParsedInput,
        key: &IdempotencyKey,
        key_facts: KeyFacts,
        answer: Option<&Result<Answer, ToolError>>,
    ) -> Served {
        let owner = format!("{}/{}", call.caller.branch(), call.caller.user());
        let store = IdempotencyStore::new(&self.db, call.caller);
        let fail = |err: ToolError, key_facts: KeyFacts| Served::unaudited(Err(err), Some(key_facts));

        // One read answers every retry: replay, conflict or in flight. It
        // comes before the rules that depend on the clock, so a retry after
        // midnight still finds yesterday's draft.
        // Which use of the key this call continues: a claim whose lease
        // lapsed (its worker died, perhaps after the ERP write) is continued,
        // anything else starts a new one.
        let continued = match store.lookup(key).await {
            Ok(Some(record)) => match record.next_action(&key_facts.fingerprint, &owner, self.clock.now()) {
                NextAction::Proceed => None,
                NextAction::LeaseExpired { generation } => Some(generation),
                answered => match answer_of(answered, key) {
                    Some(answer) => return Served::unaudited(answer, Some(key_facts)),
                    None => None,
                },
            },
            Ok(None) => None,
            Err(err) => return fail(err, key_facts),
        };
        let generation = match continued {
            Some(earlier) => Generation::Continued(earlier),
            None => Generation::New(ulid::Ulid::new().to_string()),
        };
        if let Err(err) = tool.check_rules(input, &self.rules()) {
            return fail(err, key_facts);
        }
        let name = tool.definition().name;
        let fingerprint = key_facts.fingerprint.clone();
        let asked = confirm::Asked {
            caller: call.caller,
            tool: name,
            fingerprint: &fingerprint,
            key,
        };
        let confirmed = match answer {
            None => None,
            Some(Err(err)) => return fail(err.clone(), key_facts),
            Some(Ok(answer)) => match confirm::decide(&self.cursors, answer, &asked, self.clock.now()) {
                Ok(confirmed) => Some(confirmed),
                Err(err) => return fail(err, key_facts),
            },
        };
        let mut key_facts = key_facts;
        key_facts.answered = confirmed.as_ref().map(|c| Answered {
            decision: match c.decision {
                Decision::CreateAnother => "create_another",
                Decision::UseExisting(_) => "use_existing",
            },
            existing: c.existing.clone(),
        });
        let consumption = confirmed.as_ref().and_then(|c| c.consumption.as_ref());
        let draft_key = external_key(call.caller, key, generation.id());
        let call = Call {
            draft_key: Some(&draft_key),
            decision: confirmed.as_ref().map(|c| &c.decision),
            ..*call
        };
        for attempt in 0..DRAFT_ATTEMPTS {
            let prepared = match tool.prepare(&call, input).await {
                Ok(prepared) => prepared,
                Err(ToolError::InputRequired { message, question, .. }) => {
                    // Nothing was created: seal what the person is asked
                    // about, so only their answer to this very call (under
                    // its own key) counts, once.
                    let state = confirm::seal(&self.cursors, &asked, &question.existing.number, self.clock.now());
                    return match state {
                        Ok(state) => fail(
                            ToolError::InputRequired {
                                message,
                                question,
                                request_state: Some(state),
                            },
                            key_facts,
                        ),
                        Err(err) => fail(err, key_facts),
                    };
                }
                Err(err) => return fail(err, key_facts),
            };
            let (document, batch, output) = match prepared {
                Draft::Atomic {
                    document,
                    batch,
                    output,
                } => (document, batch, output),
                Draft::External(external) => {
                    return self
                        .draft_external(
                            tool,
                            &call,
                            facts,
                            (key, &generation),
                            key_facts,
                            &owner,
                            external.as_ref(),
                            consumption,
                        )
                        .await;
                }
                // A person chose the existing draft: nothing is written.
                Draft::Existing { document, output } => {
                    return Served::unaudited(
                        Ok(Success {
                            status: StatusCode::OK,
                            data: output,
                            replayed: false,
                            document: Some(document),
                        }),
                        Some(key_facts),
                    );
                }
            };
            let Some(writes) = draftline_dynamo::items_of(batch) else {
                return fail(ToolError::internal("a draft's batch is not for this table"), key_facts);
            };
            let now = self.clock.now();
            let record = IdempotencyRecord::completed(
                name,
                &key_facts.fingerprint,
                &owner,
                StoredResponse {
                    status: StatusCode::CREATED,
                    data: output.clone(),
                    document: Some(document.clone()),
                },
                call.request_id,
                now,
                self.config.idempotency_ttl,
            );
            let created = Ok(Success {
                status: StatusCode::CREATED,
                data: output,
                replayed: false,
                document: Some(document),
            });
            let audit = AuditRecord::new(facts, call.caller, &outcome(&created, Some(&key_facts), true));
            // The key record first, then the consumption of the person's
            // answer (if any), the document's writes and the audit item.
            let items = store.put_record(key, &record, now).and_then(|record| {
                let mut items = Vec::with_capacity(writes.len() + 3);
                items.push(record);
                if let Some(consumption) = consumption {
                    items.push(consumption.put(&self.db, call.caller, call.request_id)?);
                }
                items.extend(writes);
                items.push(audit.put(&self.db)?);
                Ok(items)
            });
            let items = match items {
                Ok(items) => items,
                Err(err) => return fail(err, key_facts),
            };
            match store.commit(key, items, audit.id(), consumption.map(|_| 1)).await {
                Ok(()) => {
                    return Served {
                        result: created,
                        key: Some(key_facts),
                        audited: true,
                    };
                }
                Err(CommitFailure::KeyTaken(Some(record))) => {
                    if let Some(answer) = self.answer_from_record(&record, key, &key_facts.fingerprint, &owner) {
                        return Served::unaudited(answer, Some(key_facts));
                    }
                }
                Err(CommitFailure::KeyTaken(None) | CommitFailure::KeyInFlight) => {
                    return fail(in_flight(key, 1), key_facts);
                }
                Err(CommitFailure::Contention) => {
                    tokio::time::sleep(Duration::from_millis(5 + 20 * attempt as u64)).await;
                }
                Err(CommitFailure::ConfirmationUsed) => return fail(confirm::already_used(), key_facts),
                Err(CommitFailure::Store(err)) => return fail(err, key_facts),
            }
        }
        fail(
            ToolError::Busy {
                message: format!(
                    "Other drafts of your branch were being numbered at the same moment, and this draft lost the \
                     race {DRAFT_ATTEMPTS} times. No draft was created. Retry this same call unchanged (key \
                     '{key}') in a second."
                ),
                retry_after_seconds: 1,
            },
            key_facts,
        )
    }

    /// The draft path of a document in another system (the ERP), which
    /// cannot share draftline's transaction: claim the key with a lease →
    /// find the document an earlier worker may have created with this key,
    /// else create it (carrying the key) → complete the key record and write
    /// the audit item in one transaction, only while the lease holds.
    #[allow(clippy::too_many_arguments)]
    async fn draft_external(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        (key, generation): (&IdempotencyKey, &Generation),
        key_facts: KeyFacts,
        owner: &str,
        external: &dyn ExternalDraft<Value>,
        consumption: Option<&confirm::Consumption>,
    ) -> Served {
        let fail = |err: ToolError, key_facts: KeyFacts| Served::unaudited(Err(err), Some(key_facts));
        let store = IdempotencyStore::new(&self.db, call.caller);
        let name = tool.definition().name;
        // A person's "create another" is consumed with the claim, before the
        // ERP write. A lapsed claim of this same key taken over consumed it
        // already (the answer is bound to this key): it is not consumed again.
        let consumption = consumption.filter(|_| matches!(generation, Generation::New(_)));
        let consuming = match consumption
            .map(|c| c.put(&self.db, call.caller, call.request_id))
            .transpose()
        {
            Ok(consuming) => consuming,
            Err(err) => return fail(err, key_facts),
        };
        let claimed = store
            .claim(
                key,
                generation.id(),
                name,
                &key_facts.fingerprint,
                owner,
                call.request_id,
                self.clock.now(),
                self.config.lease,
                self.config.idempotency_ttl,
                consuming,
            )
            .await;
        let token = match claimed {
            Ok(Claim::Acquired(token)) => token,
            Ok(Claim::ConfirmationUsed) => return fail(confirm::already_used(), key_facts),
            Ok(Claim::Taken(record)) => {
                let answer = self
                    .answer_from_record(&record, key, &key_facts.fingerprint, owner)
                    .unwrap_or_else(|| Err(in_flight(key, 1)));
                return Served::unaudited(answer, Some(key_facts));
            }
            Err(err) => return fail(err, key_facts),
        };
        // A worker continuing a lapsed claim looks first: the earlier worker
        // may have created the document and died before completing the key,
        // and its document carries the same external key. A new use of the
        // key cannot have a document yet.
        let found = match generation {
            Generation::Continued(_) => external.find().await,
            Generation::New(_) => Ok(None),
        };
        let created = match found {
            Ok(Some(created)) => Ok(created),
            Ok(None) => external.create().await,
            Err(err) => Err(err),
        };
        let created = match created {
            Ok(created) => created,
            Err(err) => {
                if !err.may_have_written() {
                    // Nothing was created: the key (and the person's answer
                    // consumed with it) is free again at once.
                    let giving_back = consumption.and_then(|c| c.give_back(&self.db, call.caller).ok());
                    if let Err(release) = store.release(key, &token, giving_back).await {
                        tracing::warn!(error = %release, "a claimed key was not released; its lease will lapse");
                    }
                }
                // Otherwise the claim stays until its lease lapses; the next
                // call then finds the document by its key.
                return fail(err, key_facts);
            }
        };
        let output = match external.output(&created) {
            Ok(output) => output,
            Err(err) => return fail(err, key_facts),
        };
        let now = self.clock.now();
        let record = IdempotencyRecord::completed(
            name,
            &key_facts.fingerprint,
            owner,
            StoredResponse {
                status: StatusCode::CREATED,
                data: output.clone(),
                document: Some(created.document.clone()),
            },
            call.request_id,
            now,
            self.config.idempotency_ttl,
        );
        let success = Ok(Success {
            status: StatusCode::CREATED,
            data: output,
            replayed: false,
            document: Some(created.document),
        });
        let audit = AuditRecord::new(facts, call.caller, &outcome(&success, Some(&key_facts), true));
        let audit_put = match audit.put(&self.db) {
            Ok(put) => put,
            Err(err) => return fail(err, key_facts),
        };
        match store.complete_with(key, &token, &record, vec![audit_put]).await {
            Ok(true) => Served {
                result: success,
                key: Some(key_facts),
                audited: true,
            },
            // Another worker took the key over after our lease lapsed; it
            // finds this same document by its key and completes the record.
            Ok(false) => Served::unaudited(success, Some(key_facts)),
            Err(err) => fail(err, key_facts),
        }
    }

    /// What a stored record answers; `None` if the key is free after all.
    fn answer_from_record(
        &self,
        record: &IdempotencyRecord,
        key: &IdempotencyKey,
        fingerprint: &str,
        owner: &str,
    ) -> Option<Result<Success, ToolError>> {
        answer_of(record.next_action(fingerprint, owner, self.clock.now()), key)
    }
}

/// The answer a key record's next action gives a call, when it answers
/// one (a replay, a conflict, in flight); `None` when the call goes on.
fn answer_of(next: NextAction, key: &IdempotencyKey) -> Option<Result<Success, ToolError>> {
    match next {
        NextAction::Replay(stored) => Some(Ok(Success {
            // The stored answer, sent again: a created draft's 201 becomes
            // 200 with `replayed: true` (DESIGN.md: 201 is for the call that
            // created it).
            status: if stored.status == StatusCode::CREATED {
                StatusCode::OK
            } else {
                stored.status
            },
            data: stored.data,
            replayed: true,
            document: stored.document,
        })),
        NextAction::Conflict => Some(Err(ToolError::KeyReused(format!(
            "Idempotency key '{key}' was already used for a different request (other arguments or another \
             tool). No draft was created. If you are retrying, resend exactly the original arguments; if this \
             is a new draft, use a new key (or a new client_ref)."
        )))),
        NextAction::InFlight(after) => Some(Err(in_flight(key, after))),
        NextAction::Proceed | NextAction::LeaseExpired { .. } => None,
    }
}

/// Which use of an idempotency key a draft is: the external key of its
/// document depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Generation {
    /// A new use: no document can carry its key yet.
    New(String),
    /// The use of a claim whose worker's lease lapsed: its document may exist.
    Continued(String),
}

impl Generation {
    fn id(&self) -> &str {
        match self {
            Self::New(id) | Self::Continued(id) => id,
        }
    }
}

/// The key as an external system stores it (`draftline_key`): the SHA-256
/// of the tenant, the stored key and the use of it (`generation`, kept by a
/// worker that takes a lapsed claim over), so it is unique per tenant,
/// caller's key and use, bounded in length, and says nothing about either.
fn external_key(caller: &Caller, key: &IdempotencyKey, generation: &str) -> String {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    for part in [caller.tenant().as_str(), &key.storage_key(caller), generation] {
        digest.update(part.as_bytes());
        digest.update([0u8]);
    }
    format!("dl1-{}", hex::encode(digest.finalize()))
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
    client_ref: &str,
    transport: Transport,
) -> Result<IdempotencyKey, ToolError> {
    if let Some(key) = header {
        return Ok(key);
    }
    let derived = match (&agent.run_id, transport) {
        (Some(run), _) => Some(IdempotencyKey::from_run(run, client_ref)),
        (None, Transport::Mcp) => Some(IdempotencyKey::from_client_ref(client_ref)),
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

/// The one structured log line per call: no token, no arguments. Its
/// outcome is the audit item's ([`outcome_kind`]).
fn log_call(
    request_id: &str,
    tool: &str,
    agent: &AgentContext,
    result: &Result<Success, ToolError>,
    elapsed: Duration,
    round_trips: u64,
) {
    let duration_ms = elapsed.as_secs_f64() * 1000.0;
    let tool = tool.chars().take(64).collect::<String>();
    let outcome = outcome_kind(result).as_str();
    match result {
        Ok(success) => tracing::info!(
            request_id,
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
