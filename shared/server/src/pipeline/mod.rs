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
//!
//! ## Layout
//! - this file: the call's path in order ([`App::invoke`]): identity,
//!   scope, deadline, read or draft, audit;
//! - [`app`]: what a warm instance builds once, and its accessors;
//! - [`draft`]: the idempotent draft path; the atomic draft, written in
//!   one transaction with its key record and audit item;
//! - [`external`]: the draft of a document in the ERP, under a lease;
//! - [`atomic`]: the atomic draft's one transaction, its parts named
//!   (the limits gate's counters ride in it);
//! - [`outcome`]: the outcome of a call, named once, for the audit item and
//!   the log line.

mod app;
mod atomic;
mod draft;
mod external;
mod held;
pub(crate) mod outcome;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, Method, Response, StatusCode};

use crate::anonymous::{AnonymousTrace, UNKNOWN_TOOL};
use crate::audit::{AuditRecord, CallFacts, KeyFacts};
use crate::auth::Authenticator;
use crate::config::Config;
use crate::confirm::{self, Answer};
use crate::edge::Admitted;
use crate::edge::trace::{self, CallRecorder, Stage, TraceContext};
use crate::response;
use crate::storage::Table;
use draftline_contract::clock::Clock;
use draftline_contract::cursor::CursorKey;
use draftline_contract::error::ToolError;
use draftline_contract::identity::Caller;
use draftline_contract::request::AgentContext;
use draftline_contract::tool::{Call, Registered, Registry, RuleContext};
use draftline_dynamo::{Db, counting_round_trips};
pub use outcome::Success;
use outcome::{Logged, log_call, outcome};

/// How many times a draft is prepared again when its transaction loses a
/// race on a document item (its number was taken), not on its key.
const DRAFT_ATTEMPTS: usize = 3;

/// The part of a call's deadline kept for writing its audit item.
const AUDIT_RESERVE: Duration = Duration::from_millis(1500);

/// What a call keeps, of the time the platform allows it, for sending its
/// answer after its spans were exported.
const ANSWER_RESERVE: Duration = Duration::from_millis(100);

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
    pub request_id: &'a str,
    /// The request's headers (executor headers, idempotency key).
    pub headers: &'a HeaderMap,
    /// Who is calling, or why nobody could be identified.
    pub identity: &'a Result<Caller, ToolError>,
    /// How the call arrived.
    pub transport: Transport,
    /// The trace the call continues (the request's, or MCP `params._meta`'s).
    pub trace: &'a TraceContext,
    /// How long identifying the caller took (its token verified, the JWKS
    /// fetched if it had to be): the call's first auth time.
    pub identified_in: Duration,
    /// How long the platform still lets the invocation run, if it says.
    pub time_left: Option<Duration>,
    /// A person's answer to an earlier question about this call, as it
    /// arrived (the `Draftline-Confirm` header, or MCP parameters).
    pub answer: Option<&'a Result<Answer, ToolError>>,
}

/// What a call produced, with its request id.
#[derive(Debug)]
pub struct Invocation {
    pub request_id: String,
    pub result: Result<Success, ToolError>,
}

/// What serving a call came to, before its audit item is written.
struct Served {
    result: Result<Success, ToolError>,
    /// The draft's key, once known.
    key: Option<KeyFacts>,
    /// The audit item was written in the draft's own transaction.
    audited: bool,
    /// The limits observe mode let this call pass (a read's rate): its
    /// audit item names them.
    observed: Vec<draftline_contract::error::ReachedLimit>,
}

impl Served {
    fn unaudited(result: Result<Success, ToolError>, key: Option<KeyFacts>) -> Self {
        Self {
            result,
            key,
            audited: false,
            observed: Vec::new(),
        }
    }

    /// A call whose audit item its draft's own transaction wrote.
    fn audited(result: Result<Success, ToolError>, key: Option<KeyFacts>) -> Self {
        Self {
            audited: true,
            ..Self::unaudited(result, key)
        }
    }
}

/// A handler of server-rendered pages under one path prefix.
#[async_trait]
pub trait Pages: Send + Sync + 'static {
    /// The path prefix it owns (`/review`): that path and everything below it.
    fn prefix(&self) -> &'static str;

    /// Serves one request as the edge admitted it (its id, the origin
    /// verdict to refuse on first). Never panics; anything a browser can
    /// send gets a page (or a redirect), never a 500 for bad input.
    async fn handle(&self, app: &App, request: Admitted) -> Response<Bytes>;
}

/// Everything a warm instance builds once.
pub struct App {
    registry: Registry,
    /// Each tool's contract version ([`outcome::contract_version`]), by name.
    contracts: std::collections::HashMap<String, String>,
    auth: Authenticator,
    table: Arc<dyn Table>,
    /// The DynamoDB connection, when the table is DynamoDB's (the review
    /// pages' sessions and decisions, the local server's grants).
    db: Option<Db>,
    clock: Arc<dyn Clock>,
    config: Config,
    cursors: CursorKey,
    anonymous: AnonymousTrace,
    review_pages: String,
    pages: Option<Arc<dyn Pages>>,
    /// Where each call's spans go (`OTEL_*`); `None`: nowhere.
    exporter: Option<crate::export::Exporter>,
    /// The limits gate: each tenant's policy as last read, the agent runs
    /// this instance counted lately, the deployment's budget.
    limits: crate::policy::Limits,
    /// The draft keys this instance answered lately ([`crate::idempotency::answered`]).
    answered: crate::idempotency::AnsweredKeys,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl App {
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
            .record(self.table.as_ref(), tool, err.refusal_reason(), self.clock.now())
            .await;
    }

    /// Serves one HTTP request to the tool function `tool`, in the edge's
    /// order: its origin verdict, then the method, then identity.
    pub async fn handle_tool(&self, tool: &str, request: Admitted) -> Response<Bytes> {
        let request_id = request.request_id().to_owned();
        let time_left = request.time_left();
        if let Err(err) = request.origin() {
            // Refused at the edge, and still a call: its line, its count
            // for the anonymous trace, and its span and metrics.
            let recorder = CallRecorder::new(request.trace().clone());
            let flight = self.exporter.as_ref().map(crate::export::Exporter::begin);
            let refused = async {
                let started = Instant::now();
                let ((), round_trips) = counting_round_trips(self.trace_refusal(tool, &err)).await;
                let result = Err(err);
                let facts = CallFacts::arrived(&request_id, self.clock.now(), tool, "http", request.trace(), None);
                let line = Logged::of(&facts, &result, started, round_trips);
                self.finish(&recorder, time_left, &line, flight).await;
                result
            };
            let result = recorder.run(Box::pin(refused)).await;
            let invocation = Invocation { request_id, result };
            return self.render(&invocation);
        }
        let Admitted { parts, body, trace, .. } = request;
        if parts.method != Method::POST {
            let message = format!(
                "{tool} is called with POST and a JSON body; {} is not allowed.",
                parts.method
            );
            return response::method_not_allowed("POST", message, &request_id);
        }
        let identifying = Instant::now();
        let identity = self.identify(&parts.headers).await;
        let identified_in = identifying.elapsed();
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
            trace: &trace,
            identified_in,
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
        let recorder = CallRecorder::identified(entry.trace.clone(), entry.identified_in);
        let flight = self.exporter.as_ref().map(crate::export::Exporter::begin);
        // Boxed: one allocation per call keeps the futures of the runtimes
        // that await this one within the compiler's layout depth.
        recorder
            .run(Box::pin(self.invoke_recorded(&recorder, entry, tool, body, flight)))
            .await
    }

    /// Ends a call: its log line, then its spans exported (when an
    /// exporter is configured; `flight` counted the call in flight since
    /// it began), before its answer leaves.
    async fn finish(
        &self,
        recorder: &CallRecorder,
        time_left: Option<Duration>,
        line: &Logged<'_>,
        flight: Option<crate::export::InFlight>,
    ) {
        let line = log_call(line);
        if let (Some(exporter), Some(flight)) = (&self.exporter, flight) {
            // A span is named by a tool that exists: what an anonymous
            // caller asks for does not mint span names.
            let tool: &'static str = self
                .registry
                .get(line.tool)
                .map_or(UNKNOWN_TOOL, |registered| registered.definition().name);
            // Never past what the platform still allows, less time to answer.
            let spent = recorder.elapsed();
            let left = time_left.map(|left| left.saturating_sub(spent).saturating_sub(ANSWER_RESERVE));
            exporter.export_call(recorder, tool, &line, left, flight).await;
        }
    }

    /// [`Self::invoke`], with the call's stages and requests recorded.
    async fn invoke_recorded(
        &self,
        recorder: &CallRecorder,
        entry: &Entry<'_>,
        tool: &str,
        body: &[u8],
        flight: Option<crate::export::InFlight>,
    ) -> Invocation {
        let started = Instant::now();
        let request_id = entry.request_id.to_owned();
        let facts = CallFacts {
            agent: AgentContext::lenient(entry.headers),
            ..CallFacts::arrived(
                &request_id,
                self.clock.now(),
                tool,
                entry.transport.as_str(),
                entry.trace,
                Some(body),
            )
        };
        let caller = match entry.identity {
            Ok(caller) => caller,
            Err(err) => {
                let ((), round_trips) = counting_round_trips(self.trace_refusal(tool, err)).await;
                let result = Err(err.clone());
                self.finish(
                    recorder,
                    entry.time_left,
                    &Logged::of(&facts, &result, started, round_trips),
                    flight,
                )
                .await;
                return Invocation { request_id, result };
            }
        };
        let deadline = entry.time_left.map_or(self.config.call_deadline, |left| {
            self.config
                .call_deadline
                .min(left.saturating_sub(Duration::from_millis(300)))
        });
        let work = deadline.saturating_sub(AUDIT_RESERVE.min(deadline / 4));
        // Set once the call passed the scope check, even if it then ran out of time.
        let authorized = AtomicBool::new(false);
        let ((result, key), round_trips) = counting_round_trips(async {
            // Boxed, as is the audit write below: the layers around them
            // (timeout, round-trip count, recorder) each move what they
            // wrap, and SDK futures are kilobytes.
            let serving = Box::pin(self.serve(caller, &facts, tool, body, entry, &authorized));
            let served = match tokio::time::timeout(work, serving).await {
                Ok(served) => served,
                Err(_elapsed) => {
                    let draft = matches!(self.registry.get(tool), Some(Registered::Draft(_)));
                    Served::unaudited(Err(ToolError::deadline(deadline, draft)), None)
                }
            };
            let key = served.key.as_ref().map(|k| k.key.clone());
            if served.audited {
                return (served.result, key);
            }
            let authorized = authorized.load(Ordering::Relaxed);
            let audit_time = deadline.saturating_sub(work).max(AUDIT_RESERVE / 3);
            let result = self
                .audit(&facts, caller, served, authorized, (audit_time, deadline))
                .await;
            (result, key)
        })
        .await;
        let line = Logged {
            caller: Some(caller),
            contract: self.contracts.get(tool).map(String::as_str),
            key: key.as_deref(),
            ..Logged::of(&facts, &result, started, round_trips)
        };
        self.finish(recorder, entry.time_left, &line, flight).await;
        Invocation { request_id, result }
    }

    /// Writes the audit item of a call `served` (whose draft did not write
    /// it in its own transaction) within `time`, and gives the call's
    /// result: a result that could not be recorded is not handed out.
    async fn audit(
        &self,
        facts: &CallFacts,
        caller: &Caller,
        served: Served,
        authorized: bool,
        (time, deadline): (Duration, Duration),
    ) -> Result<Success, ToolError> {
        let record = crate::policy::Label::of_outcome(&served.result, served.observed).on(AuditRecord::new(
            facts,
            caller,
            &outcome(&served.result, served.key.as_ref(), authorized),
        ));
        let written = trace::stage(
            Stage::Audit,
            tokio::time::timeout(time, Box::pin(record.write(self.table.as_ref()))),
        )
        .await
        .unwrap_or_else(|_| Err(ToolError::deadline(deadline, false)));
        match (served.result, written) {
            (result, Ok(())) => result,
            (Err(err), Err(audit)) => {
                tracing::error!(request_id = %facts.request_id, error = %audit, "audit item not written");
                Err(err)
            }
            (Ok(_), Err(audit)) => {
                tracing::error!(request_id = %facts.request_id, error = %audit, "audit item not written");
                Err(audit)
            }
        }
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
        let tool = match trace::stage(Stage::Auth, self.authorize(caller, name)).await {
            Ok(tool) => tool,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        authorized.store(true, Ordering::Relaxed);
        let agent = match trace::stage(Stage::Validation, async { AgentContext::from_headers(entry.headers) }).await {
            Ok(agent) => agent,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        let examiner = crate::policy::TableExaminer::new(self.table.as_ref(), self.limits.policies());
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
            limits: &examiner,
            found: None,
        };
        match tool {
            Registered::Read(read) => {
                let mut observed = Vec::new();
                let result = async {
                    let input = trace::stage(Stage::Validation, async {
                        let input = read.parse(body)?;
                        read.check_rules(&input, &self.rules())?;
                        Ok::<_, ToolError>(input)
                    })
                    .await?;
                    // The policy's rate, before the ERP is asked: a valid
                    // call counts, a refused one reads nothing.
                    if read.definition().counts_against_the_rate() {
                        let admitted = self
                            .limits
                            .admit_read(self.table.as_ref(), caller, name, self.clock.as_ref());
                        observed = trace::stage(Stage::Auth, admitted).await?;
                    }
                    let data = trace::stage(Stage::Erp, read.read(&call, &input)).await?;
                    Ok(Success {
                        status: StatusCode::OK,
                        data,
                        replayed: false,
                        document: None,
                    })
                }
                .await;
                Served {
                    observed,
                    ..Served::unaudited(result, None)
                }
            }
            // Boxed: a draft's future is many kilobytes (its lookup, its
            // transaction, the ERP path), and every future around a call
            // is moved whole a few times as it starts. Inline, a read's
            // future was as big and paid those copies too.
            Registered::Draft(draft) => Box::pin(self.draft(draft.as_ref(), &call, facts, body, entry)).await,
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
        self.limits.admit(self.table.as_ref(), caller, self.clock.now()).await?;
        Ok(tool)
    }

    fn rules(&self) -> RuleContext {
        RuleContext {
            today: self.clock.now().date_naive(),
        }
    }
}
