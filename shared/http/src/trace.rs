//! A call's trace and where its time went.
//!
//! - [`TraceContext`]: W3C Trace Context (`traceparent`, `tracestate`),
//!   read where a call enters (the HTTP request, or MCP 2026-07-28
//!   `params._meta`), validated, and continued. A malformed value is
//!   ignored, never an error: the call then starts a fresh trace.
//! - [`CallRecorder`]: what one call records while it runs, shared by every
//!   task working for it (a task-local): the time of each [`Stage`] and
//!   each request it made to a dependency ([`DependencyRequest`], one per
//!   DynamoDB attempt and per Tryton request, each with its own span id).
//!   A request to the ERP carries the call's trace onward
//!   ([`outgoing`]: `traceparent` naming that request's span).
//!
//! Only ids, names, timings and outcomes are recorded here: never a token,
//! an argument, a key or a body.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::HeaderMap;

/// The longest `tracestate` kept (the W3C limit is 32 members of 256; a
/// longer one is dropped rather than cut, as the spec allows).
const MAX_TRACESTATE: usize = 512;

/// The trace a call belongs to: its trace id, and the caller's span it
/// continues (none for a fresh trace).
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    parent: Option<[u8; 8]>,
    sampled: bool,
    tracestate: Option<String>,
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("trace_id", &self.trace_id())
            .field("parent", &self.parent_span_id())
            .field("sampled", &self.sampled)
            .finish()
    }
}

impl TraceContext {
    /// A fresh trace: a random trace id, no parent, sampled.
    pub fn fresh() -> Self {
        let mut trace_id: [u8; 16] = rand::random();
        if trace_id == [0; 16] {
            trace_id[15] = 1;
        }
        Self {
            trace_id,
            parent: None,
            sampled: true,
            tracestate: None,
        }
    }

    /// The trace the headers continue, else a fresh one.
    pub fn of_headers(headers: &HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Self::continued(text("traceparent"), text("tracestate")).unwrap_or_else(Self::fresh)
    }

    /// The trace `traceparent` (and its `tracestate`) continue, if it is valid.
    pub fn continued(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Self> {
        let (trace_id, parent, sampled) = parse_traceparent(traceparent?)?;
        let tracestate = tracestate
            .map(str::trim)
            .filter(|state| valid_tracestate(state))
            .map(str::to_owned);
        Some(Self {
            trace_id,
            parent: Some(parent),
            sampled,
            tracestate,
        })
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        hex::encode(self.trace_id)
    }

    /// The trace id's bytes.
    pub fn trace_id_bytes(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The caller's span this call continues, 16 lowercase hex digits.
    pub fn parent_span_id(&self) -> Option<String> {
        self.parent.map(hex::encode)
    }

    /// The caller's span's bytes.
    pub fn parent_span_id_bytes(&self) -> Option<[u8; 8]> {
        self.parent
    }

    /// Whether the caller sampled the trace (`01` flag).
    pub fn sampled(&self) -> bool {
        self.sampled
    }

    /// The vendor state to pass on unchanged, when the caller sent a valid one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `traceparent` that names span `span_id` of this trace (what a
    /// request this call makes carries onward).
    pub fn traceparent_for(&self, span_id: [u8; 8]) -> String {
        format!(
            "00-{}-{}-{}",
            self.trace_id(),
            hex::encode(span_id),
            if self.sampled { "01" } else { "00" }
        )
    }
}

/// The stages a call's time is told in, in the order a call passes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Verifying the token, the scope check and the rate budget.
    Auth,
    /// Parsing the arguments and checking their rules.
    Validation,
    /// The key record in DynamoDB: the lookup, the claim, and the
    /// transaction or completion that records the answer.
    Idempotency,
    /// The ERP's reads and the draft's placement (DynamoDB for the
    /// built-in backend, Tryton's REST API for Tryton).
    Erp,
    /// Writing the audit item (when it is not part of the draft's own
    /// transaction, where it counts as idempotency).
    Audit,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 5] = [Self::Auth, Self::Validation, Self::Idempotency, Self::Erp, Self::Audit];

    /// The stage's name in the log line, the audit item and the run page.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Validation => "validation",
            Self::Idempotency => "idempotency",
            Self::Erp => "erp",
            Self::Audit => "audit",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The time a call spent in each stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stages([Duration; 5]);

impl Stages {
    /// The time spent in `stage`.
    pub fn get(&self, stage: Stage) -> Duration {
        self.0[stage.index()]
    }

    /// Adds `spent` to `stage`.
    pub fn add(&mut self, stage: Stage, spent: Duration) {
        let slot = &mut self.0[stage.index()];
        *slot = slot.saturating_add(spent);
    }

    /// Each stage with its time, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Stage, Duration)> + '_ {
        Stage::ALL.into_iter().map(|stage| (stage, self.get(stage)))
    }
}

/// One request a call made to a dependency (one DynamoDB attempt, one
/// Tryton request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyRequest {
    /// `dynamodb` or `tryton`.
    pub system: &'static str,
    /// What was asked (`GetItem`, `POST purchase.purchase`): an operation
    /// or a model, never a value.
    pub operation: String,
    /// The request's own span id (a Tryton request carries it in its
    /// `traceparent`).
    pub span_id: [u8; 8],
    /// When it was sent, from the call's start.
    pub started: Duration,
    /// How long it took.
    pub duration: Duration,
    /// Whether an answer came (any status); `false`: none arrived.
    pub answered: bool,
}

/// The most dependency requests one call keeps (a call makes a handful;
/// the rest are counted, not kept).
pub const MAX_KEPT_REQUESTS: usize = 128;

/// One passage of a call through a stage (a draft may pass a stage more
/// than once: its key looked up, then committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageSpan {
    /// The stage.
    pub stage: Stage,
    /// When it began, from the call's start.
    pub started: Duration,
    /// How long it took.
    pub duration: Duration,
}

/// What a call recorded so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Time per stage.
    pub stages: Stages,
    /// Each passage through a stage, in the order they ended (at most
    /// [`MAX_KEPT_REQUESTS`]); the identification before the call is not one.
    pub stage_spans: Vec<StageSpan>,
    /// Requests to dependencies, in the order they finished (at most
    /// [`MAX_KEPT_REQUESTS`]).
    pub requests: Vec<DependencyRequest>,
    /// The stored items the call could not read and went on without
    /// (treated as absent), by the kind of record (at most
    /// [`MAX_KEPT_REQUESTS`]).
    pub unreadable: Vec<&'static str>,
}

/// What one call records while it runs: its trace, its own span id, and
/// the time of its stages and dependency requests. Every task working for
/// the call (the SDK's transport, the Tryton client) records into it
/// through [`CallRecorder::run`]'s task-local.
#[derive(Debug)]
pub struct CallRecorder {
    context: TraceContext,
    span_id: [u8; 8],
    started: Instant,
    identified_in: Duration,
    recorded: Mutex<Recorded>,
}

tokio::task_local! {
    static CALL: Arc<CallRecorder>;
}

impl CallRecorder {
    /// A recorder for a call in `context`, starting now, with a new span id.
    pub fn new(context: TraceContext) -> Arc<Self> {
        Self::identified(context, Duration::ZERO)
    }

    /// A recorder for a call in `context` whose caller was identified in
    /// `identified_in`, just before now: that time is the call's, as its
    /// auth stage (with no span of its own here).
    pub fn identified(context: TraceContext, identified_in: Duration) -> Arc<Self> {
        let mut recorded = Recorded::default();
        recorded.stages.add(Stage::Auth, identified_in);
        Arc::new(Self {
            context,
            span_id: span_id(),
            started: Instant::now(),
            identified_in,
            recorded: Mutex::new(recorded),
        })
    }

    /// The trace the call belongs to.
    pub fn context(&self) -> &TraceContext {
        &self.context
    }

    /// The call's own span id.
    pub fn span_id(&self) -> [u8; 8] {
        self.span_id
    }

    /// When the recorder started, once the caller was identified.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// How long identifying the caller took, before [`Self::started`].
    pub fn identified_in(&self) -> Duration {
        self.identified_in
    }

    /// How long the call has run, identifying its caller included.
    pub fn elapsed(&self) -> Duration {
        self.identified_in + self.started.elapsed()
    }

    /// What was recorded so far.
    pub fn recorded(&self) -> Recorded {
        self.recorded.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Runs `fut` as work of this call: stages and requests inside it are
    /// recorded here.
    pub async fn run<F: Future>(self: &Arc<Self>, fut: F) -> F::Output {
        CALL.scope(self.clone(), fut).await
    }

    fn edit(&self, edit: impl FnOnce(&mut Recorded)) {
        if let Ok(mut recorded) = self.recorded.lock() {
            edit(&mut recorded);
        }
    }
}

/// A new random span id (never all zeros).
pub fn span_id() -> [u8; 8] {
    let mut id: [u8; 8] = rand::random();
    if id == [0; 8] {
        id[7] = 1;
    }
    id
}

/// What the call being served recorded so far, and how long it has run
/// (identifying its caller included); `None` outside a call.
pub fn current() -> Option<(Recorded, Duration)> {
    CALL.try_with(|call| (call.recorded(), call.elapsed())).ok()
}

/// The `traceparent` of the span of the call being served: what work the
/// call leaves for later (an event's delivery) links to. `None` outside a
/// call.
pub fn current_traceparent() -> Option<String> {
    CALL.try_with(|call| call.context.traceparent_for(call.span_id)).ok()
}

/// Runs `fut` as stage `stage` of the call being served (and only runs it
/// outside a call).
pub async fn stage<F: Future>(stage: Stage, fut: F) -> F::Output {
    let start = Instant::now();
    let out = fut.await;
    let duration = start.elapsed();
    let _ = CALL.try_with(|call| {
        let started = start.saturating_duration_since(call.started);
        call.edit(|r| {
            r.stages.add(stage, duration);
            if r.stage_spans.len() < MAX_KEPT_REQUESTS {
                r.stage_spans.push(StageSpan {
                    stage,
                    started,
                    duration,
                });
            }
        });
    });
    out
}

/// For a request the call being served is about to send: a new span id for
/// it and the `traceparent` (and `tracestate`) that carry the call's trace
/// onward to it. `None` outside a call.
pub fn outgoing() -> Option<([u8; 8], String, Option<String>)> {
    CALL.try_with(|call| {
        let id = span_id();
        (
            id,
            call.context.traceparent_for(id),
            call.context.tracestate().map(str::to_owned),
        )
    })
    .ok()
}

/// Records a request to `system` that was sent at `sent` as span `span_id`
/// of the call being served, if any.
pub fn record_request(system: &'static str, operation: &str, span_id: [u8; 8], sent: Instant, answered: bool) {
    let _ = CALL.try_with(|call| {
        let request = DependencyRequest {
            system,
            operation: operation.chars().take(64).collect(),
            span_id,
            started: sent.saturating_duration_since(call.started),
            duration: sent.elapsed(),
            answered,
        };
        call.edit(|r| {
            if r.requests.len() < MAX_KEPT_REQUESTS {
                r.requests.push(request);
            }
        });
    });
}

/// Records that the call being served found a stored `record` it could not
/// read, and went on as if it were absent (counted per call, so its
/// metric names the tool).
pub fn record_unreadable(record: &'static str) {
    let _ = CALL.try_with(|call| {
        call.edit(|r| {
            if r.unreadable.len() < MAX_KEPT_REQUESTS {
                r.unreadable.push(record);
            }
        });
    });
}

/// `version-traceid-parentid-flags`, lowercase hex; version `ff`, all-zero
/// ids and a version-00 header with more fields are invalid. A later version
/// may carry more fields after these four, which are read as version 00's.
fn parse_traceparent(value: &str) -> Option<([u8; 16], [u8; 8], bool)> {
    let value = value.trim();
    let mut fields = value.split('-');
    let (version, trace, parent, flags) = (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
    let hex_field = |field: &str, len: usize| {
        field.len() == len && field.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !hex_field(version, 2)
        || version == "ff"
        || !hex_field(trace, 32)
        || !hex_field(parent, 16)
        || !hex_field(flags, 2)
    {
        return None;
    }
    if version == "00" && fields.next().is_some() {
        return None;
    }
    let mut trace_id = [0u8; 16];
    let mut parent_id = [0u8; 8];
    hex::decode_to_slice(trace, &mut trace_id).ok()?;
    hex::decode_to_slice(parent, &mut parent_id).ok()?;
    if trace_id == [0; 16] || parent_id == [0; 8] {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some((trace_id, parent_id, flags & 1 == 1))
}

/// A `tracestate` kept as it came: bounded, printable, list members of `key=value`.
fn valid_tracestate(state: &str) -> bool {
    !state.is_empty()
        && state.len() <= MAX_TRACESTATE
        && state.bytes().all(|b| (0x20..0x7f).contains(&b))
        && state
            .split(',')
            .map(str::trim)
            .filter(|member| !member.is_empty())
            .all(|member| {
                member
                    .split_once('=')
                    .is_some_and(|(k, v)| !k.is_empty() && !v.is_empty())
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[tokio::test]
    async fn a_call_records_its_stages_and_requests_and_nothing_outside_one() {
        // Outside a call nothing is recorded and nothing is forwarded.
        assert!(outgoing().is_none());
        stage(Stage::Erp, async {}).await;
        let identifying = Duration::from_millis(2);
        let call = CallRecorder::identified(TraceContext::continued(Some(VALID), None).unwrap(), identifying);
        call.run(async {
            stage(Stage::Validation, tokio::time::sleep(Duration::from_millis(5))).await;
            let (id, traceparent, state) = outgoing().unwrap();
            assert_eq!(
                traceparent,
                format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01", hex::encode(id))
            );
            assert_eq!(state, None);
            record_request("tryton", "GET product.product", id, Instant::now(), true);
            // Another task working for the call records into it too.
            tokio::spawn(CALL.scope(CALL.with(Arc::clone), async {
                stage(Stage::Audit, tokio::time::sleep(Duration::from_millis(1))).await;
            }))
            .await
            .unwrap();
            // The call's time holds its stages, identifying its caller included.
            let (recorded, elapsed) = current().unwrap();
            let staged: Duration = Stage::ALL.iter().map(|s| recorded.stages.get(*s)).sum();
            assert!(staged <= elapsed, "{staged:?} within {elapsed:?}");
        })
        .await;
        let recorded = call.recorded();
        assert!(recorded.stages.get(Stage::Validation) >= Duration::from_millis(5));
        assert!(recorded.stages.get(Stage::Audit) >= Duration::from_millis(1));
        assert_eq!(recorded.stages.get(Stage::Auth), identifying);
        assert_eq!(recorded.stages.get(Stage::Erp), Duration::ZERO);
        // A timed stage is a span of its own; the identifying time is not.
        let spans: Vec<Stage> = recorded.stage_spans.iter().map(|s| s.stage).collect();
        assert_eq!(spans, [Stage::Validation, Stage::Audit]);
        assert_eq!(recorded.requests.len(), 1);
        assert_eq!(recorded.requests[0].operation, "GET product.product");
        assert!(call.elapsed() >= identifying + Duration::from_millis(6));
        assert_ne!(call.span_id(), [0; 8]);
    }

    #[test]
    fn a_valid_traceparent_is_continued_with_its_state() {
        let trace = TraceContext::continued(Some(VALID), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).unwrap();
        assert_eq!(trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(trace.parent_span_id().as_deref(), Some("00f067aa0ba902b7"));
        assert!(trace.sampled());
        assert_eq!(trace.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
        assert_eq!(
            trace.traceparent_for([1, 2, 3, 4, 5, 6, 7, 8]),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0102030405060708-01"
        );
        // A later version's extra fields are tolerated.
        assert!(TraceContext::continued(Some(&format!("01{}-extra", &VALID[2..])), None).is_some());
    }

    #[test]
    fn a_malformed_traceparent_is_ignored_and_a_bad_tracestate_dropped() {
        for bad in [
            "",
            "garbage",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        ] {
            assert!(TraceContext::continued(Some(bad), None).is_none(), "{bad}");
        }
        let kept = TraceContext::continued(Some(VALID), Some("no-equals-sign")).unwrap();
        assert_eq!(kept.tracestate(), None);
        let long = format!("k={}", "v".repeat(MAX_TRACESTATE));
        assert_eq!(
            TraceContext::continued(Some(VALID), Some(&long)).unwrap().tracestate(),
            None
        );
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", "not-a-trace".parse().unwrap());
        let fresh = TraceContext::of_headers(&headers);
        assert_eq!(fresh.parent_span_id(), None);
        assert_eq!(fresh.trace_id().len(), 32);
        assert_ne!(fresh.trace_id(), TraceContext::fresh().trace_id());
    }
}
