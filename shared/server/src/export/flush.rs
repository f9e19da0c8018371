//! A call's telemetry leaves before the instance can be frozen, and calls
//! served at the same time share the requests that carry it: group commit,
//! as the audit writer does for audit items (`draftline_dynamo::append`).
//!
//! A call hands its spans to the queue. The flush is a task of its own,
//! started by the first call of a burst: it takes everything queued,
//! collects the metrics once, and sends one traces request and one metrics
//! request (at the same time); the calls that arrived meanwhile go in the
//! next flush.
//!
//! Only the last call in flight waits for its flush. A platform freezes an
//! instance once no call is in flight (Lambda after each invocation,
//! Vercel once the last request answered), so spans handed over while
//! another call is in flight are sent by the flush task before that call
//! answers: the last one in flight waits for the flush that carries its
//! own spans, and flushes go in order, so everything queued before it has
//! left by then. The others answer as soon as their spans are queued, and
//! a flush that fails them costs each one warn line, from the flush task.
//! One call at a time, as on Lambda, is one flush per call, waited for. A
//! call that stops waiting (its bound) never cancels the flush.
//!
//! A collector that does not answer never costs the service its
//! throughput. After [`TRIP_AFTER`] failed flushes in a row the breaker
//! opens: no call waits for a flush, and nothing is sent until a probe,
//! one flush [`PROBE_AFTER`] later (started by the next call, which waits
//! for it if it is the last in flight); a probe that succeeds closes the
//! breaker and sends what is queued. The queue holds at most [`MAX_QUEUED`]
//! calls' spans, dropping the oldest first; drops are counted
//! (`draftline.export.dropped_spans`) and warned at most once a minute.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::Sampler;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use tokio::sync::oneshot;

use super::metrics::Metrics;

/// The most calls one flush carries (each a handful of spans: a request
/// stays far below a collector's usual 4 MiB limit).
const MAX_CALLS: usize = 64;

/// The longest the spans of a call that answered at once wait for a flush
/// while other calls are in flight: a busy instance sends a request per
/// [`MAX_CALLS`] calls or per this time, whichever comes first.
const LINGER: Duration = Duration::from_secs(1);

/// The most calls queued for export, a few flushes' worth: past it the
/// oldest call's spans are dropped.
pub(super) const MAX_QUEUED: usize = 4 * MAX_CALLS;

/// Failed or timed-out flushes in a row that open the breaker.
const TRIP_AFTER: u32 = 3;

/// How long an open breaker sends nothing: then one flush probes the
/// collector.
const PROBE_AFTER: Duration = Duration::from_secs(5);

/// The least time between two warn lines about dropped spans.
const DROP_WARN_EVERY: Duration = Duration::from_secs(60);

/// What a flush tells the calls it carried: `Ok`, or what failed.
pub(super) type Flushed = Result<(), String>;

/// A call's spans, and where the flush's outcome goes.
struct Pending {
    spans: Vec<SpanData>,
    waiting: Waiting,
}

/// Who hears how a call's flush went.
enum Waiting {
    /// The call, which waits for it.
    Call(oneshot::Sender<Flushed>),
    /// No one: the call answered at once (another was in flight), so the
    /// flush task writes its warn line if the flush fails.
    Nobody { request_id: String, what: &'static str },
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Pending>,
    /// A flush task runs.
    flushing: bool,
    /// A task will start a flush after [`LINGER`].
    lingering: bool,
    /// Failed flushes in a row.
    failures: u32,
    /// The breaker is open: calls do not wait, and nothing is sent before
    /// this time (then one flush probes the collector).
    open_until: Option<Instant>,
    /// Spans dropped from the full queue, in all and since the last warn line.
    dropped: u64,
    unwarned: u64,
    warned_at: Option<Instant>,
    /// The most calls ever queued at once.
    most_queued: usize,
}

/// Spans a push dropped, and how many to warn about now (at most once a
/// [`DROP_WARN_EVERY`]).
struct Dropped {
    spans: u64,
    warn: Option<u64>,
}

/// How a flush changed the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Breaker {
    Opened,
    Closed,
}

impl Queue {
    /// Whether what is pending is to be flushed now: a call waits for it,
    /// or it fills a request.
    fn due(&self) -> bool {
        self.pending.len() >= MAX_CALLS || self.pending.iter().any(|p| matches!(p.waiting, Waiting::Call(_)))
    }

    /// Whether calls wait for their flush: the breaker is closed.
    fn closed(&self) -> bool {
        self.open_until.is_none()
    }

    /// Whether a flush may be sent at `now`: the breaker is closed, or it
    /// is open and its probe is due (taken by this flush: the next is a
    /// [`PROBE_AFTER`] later).
    fn may_send(&mut self, now: Instant) -> bool {
        match self.open_until {
            None => true,
            Some(until) if now >= until => {
                self.open_until = Some(now + PROBE_AFTER);
                true
            }
            Some(_) => false,
        }
    }

    /// Queues `pending`, first dropping the oldest calls past [`MAX_QUEUED`]
    /// (a call still waiting hears that its spans were dropped).
    fn push(&mut self, pending: Pending, now: Instant) -> Dropped {
        let mut spans = 0u64;
        while self.pending.len() >= MAX_QUEUED {
            let Some(oldest) = self.pending.pop_front() else {
                break;
            };
            spans += oldest.spans.len() as u64;
            if let Waiting::Call(done) = oldest.waiting {
                let _ = done.send(Err("dropped: the export queue is full".to_owned()));
            }
        }
        self.pending.push_back(pending);
        self.most_queued = self.most_queued.max(self.pending.len());
        self.dropped += spans;
        self.unwarned += spans;
        let warn = (self.unwarned > 0 && self.warned_at.is_none_or(|at| now - at >= DROP_WARN_EVERY)).then(|| {
            self.warned_at = Some(now);
            std::mem::take(&mut self.unwarned)
        });
        Dropped { spans, warn }
    }

    /// Counts a flush's `outcome` at `now`: a success closes the breaker, the
    /// [`TRIP_AFTER`]th failure in a row opens it. While it is open after a
    /// failure (opened now, or a probe failed), the calls still waiting in
    /// the queue are told at once, instead of at their bound.
    fn flushed(&mut self, outcome: &Flushed, now: Instant) -> Option<Breaker> {
        if outcome.is_ok() {
            self.failures = 0;
            return self.open_until.take().map(|_| Breaker::Closed);
        }
        self.failures = self.failures.saturating_add(1);
        if self.failures < TRIP_AFTER {
            return None;
        }
        let opened = self.open_until.is_none();
        if opened {
            self.open_until = Some(now + PROBE_AFTER);
        }
        self.stop_waiting();
        opened.then_some(Breaker::Opened)
    }

    /// Tells every call waiting in the queue that the collector does not
    /// answer: it answers at once; its spans stay queued.
    fn stop_waiting(&mut self) {
        for pending in &mut self.pending {
            if matches!(pending.waiting, Waiting::Call(_)) {
                let waiting = std::mem::replace(
                    &mut pending.waiting,
                    Waiting::Nobody {
                        request_id: String::new(),
                        what: "spans",
                    },
                );
                if let Waiting::Call(done) = waiting {
                    let _ = done.send(Err(
                        "the collector does not answer; calls stop waiting for it".to_owned()
                    ));
                }
            }
        }
    }
}

/// The export queue's state, for tests and diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    /// Calls queued now.
    pub queued: usize,
    /// The most calls ever queued at once.
    pub most_queued: usize,
    /// The most calls the queue holds.
    pub cap: usize,
    /// Spans dropped from the full queue, in all.
    pub dropped_spans: u64,
    /// Whether the breaker is open (calls do not wait for flushes).
    pub open: bool,
}

/// What the flush task shares with the calls.
#[derive(Debug)]
pub(super) struct Inner {
    /// The spans' exporter; `None` when traces are off.
    pub(super) spans: Option<opentelemetry_otlp::SpanExporter>,
    /// The instruments and the metrics' exporter; `None` when metrics are off.
    pub(super) metrics: Option<(Metrics, opentelemetry_otlp::MetricExporter)>,
    pub(super) sampler: Sampler,
    pub(super) scope: InstrumentationScope,
    pub(super) flush_timeout: Duration,
    pub(super) flusher: Flusher,
}

/// The calls waiting for a flush on one warm instance.
#[derive(Default)]
pub(super) struct Flusher {
    queue: Mutex<Queue>,
    /// Calls begun and not yet handed to the queue ([`InFlight`]).
    in_flight: AtomicUsize,
}

/// One call in flight on the instance, from its start until its spans are
/// queued (or it ends without any): while it is, the calls that end before
/// it need not wait for their flush.
#[derive(Debug)]
pub struct InFlight {
    inner: Arc<Inner>,
    counted: bool,
}

impl InFlight {
    pub(super) fn begin(inner: &Arc<Inner>) -> Self {
        inner.flusher.in_flight.fetch_add(1, Ordering::AcqRel);
        Self {
            inner: inner.clone(),
            counted: true,
        }
    }

    /// Ends the count; whether this was the last call in flight.
    fn end(&mut self) -> bool {
        if !std::mem::replace(&mut self.counted, false) {
            return true;
        }
        self.inner.flusher.in_flight.fetch_sub(1, Ordering::AcqRel) == 1
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.end();
    }
}

impl Flusher {
    /// The queue's state now.
    pub(super) fn stats(&self) -> QueueStats {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        QueueStats {
            queued: queue.pending.len(),
            most_queued: queue.most_queued,
            cap: MAX_QUEUED,
            dropped_spans: queue.dropped,
            open: !queue.closed(),
        }
    }
}

impl std::fmt::Debug for Flusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flusher").finish_non_exhaustive()
    }
}

impl Inner {
    /// Queues `spans` (the metrics are already recorded) and ends
    /// `flight`. Returns a receiver of the outcome of the flush that
    /// carries them if the call must wait for it (it was the last in
    /// flight), else `None`: the call answers at once.
    pub(super) fn queue(
        self: &Arc<Self>,
        spans: Vec<SpanData>,
        mut flight: InFlight,
        request_id: &str,
        what: &'static str,
    ) -> Option<oneshot::Receiver<Flushed>> {
        let now = Instant::now();
        let (outcome, start, dropped) = {
            let mut queue = self.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            // Decided under the queue's lock, so of two calls ending at
            // once, the one that is last queues after the other.
            let last = flight.end();
            if spans.is_empty() && self.metrics.is_none() {
                // Nothing of its own; the last call still waits for what
                // the others handed over.
                if !last || (queue.pending.is_empty() && !queue.flushing) {
                    return None;
                }
            }
            let closed = queue.closed();
            // With the breaker open, no call waits; a probe is waited for
            // by the last call in flight (below), as any flush.
            let probe = !closed && !queue.flushing && queue.may_send(now);
            if !closed && !probe && spans.is_empty() {
                // Nothing of its own to keep (its metrics stay recorded and
                // leave with the probe's collection), and nobody waits.
                return None;
            }
            let (waiting, outcome) = if last && (closed || probe) {
                let (done, outcome) = oneshot::channel();
                (Waiting::Call(done), Some(outcome))
            } else {
                let request_id = request_id.to_owned();
                (Waiting::Nobody { request_id, what }, None)
            };
            let dropped = queue.push(Pending { spans, waiting }, now);
            if probe {
                // The probe carries its own call's spans first: the call
                // that waits for it hears how it went.
                if let Some(own) = queue.pending.pop_back() {
                    queue.pending.push_front(own);
                }
            }
            let start = if queue.flushing {
                // The running flush task takes it next, or leaves it to linger.
                None
            } else if probe || (closed && queue.due()) {
                queue.flushing = true;
                Some(Start::Flush)
            } else if closed && !std::mem::replace(&mut queue.lingering, true) {
                Some(Start::Linger)
            } else {
                // Open: it waits for the next probe.
                None
            };
            (outcome, start, dropped)
        };
        self.dropped(dropped);
        if let Some(start) = start {
            tokio::spawn(flush_task(self.clone(), start));
        }
        outcome
    }

    /// Counts and (at most once a [`DROP_WARN_EVERY`]) warns about spans
    /// dropped from the full queue.
    fn dropped(&self, dropped: Dropped) {
        if dropped.spans == 0 {
            return;
        }
        if let Some((metrics, _)) = &self.metrics {
            metrics.dropped_spans(dropped.spans);
        }
        if let Some(spans) = dropped.warn {
            tracing::warn!(
                spans,
                cap = MAX_QUEUED,
                "spans dropped, oldest first: the export queue is full (the collector does not keep up or does \
                 not answer); at most one such line a minute"
            );
        }
    }
}

/// How a flush task begins.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Flushing at once.
    Flush,
    /// After [`LINGER`], flushing what calls that did not wait left
    /// queued (unless a flush runs by then: it takes them).
    Linger,
}

/// Flushes what is queued, a group at a time: the first group always,
/// then while what is left is due ([`Queue::due`]); what is not is left to
/// linger, in the same task.
async fn flush_task(inner: Arc<Inner>, mut start: Start) {
    loop {
        if start == Start::Linger {
            tokio::time::sleep(LINGER).await;
            let mut queue = inner.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.lingering = false;
            // With the breaker open, what is queued waits for the next probe.
            if queue.pending.is_empty() || queue.flushing || !queue.closed() {
                return;
            }
            queue.flushing = true;
        }
        if !flush_due(&inner).await {
            return;
        }
        start = Start::Linger;
    }
}

/// The groups of one flush task; then whether it lingers for what is left.
async fn flush_due(inner: &Arc<Inner>) -> bool {
    let mut first = true;
    loop {
        let group: Vec<Pending> = {
            let mut queue = inner.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            let closed = queue.closed();
            if queue.pending.is_empty() || !(first || (closed && queue.due())) {
                queue.flushing = false;
                return !queue.pending.is_empty() && closed && !std::mem::replace(&mut queue.lingering, true);
            }
            let n = queue.pending.len().min(MAX_CALLS);
            queue.pending.drain(..n).collect()
        };
        first = false;
        let (spans, waiting): (Vec<Vec<SpanData>>, Vec<(Waiting, usize)>) = group
            .into_iter()
            .map(|pending| {
                let count = pending.spans.len();
                (pending.spans, (pending.waiting, count))
            })
            .unzip();
        let outcome = flush(inner, spans.into_iter().flatten().collect()).await;
        let (changed, closed) = {
            let mut queue = inner.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            let changed = queue.flushed(&outcome, Instant::now());
            (changed, queue.closed())
        };
        match (changed, &outcome) {
            (Some(Breaker::Opened), Err(err)) => tracing::warn!(
                error = %err,
                failures = TRIP_AFTER,
                probe_after_s = PROBE_AFTER.as_secs(),
                "the collector does not answer: calls stop waiting for the export, and it is probed again later"
            ),
            (Some(Breaker::Closed), _) => tracing::info!("the collector answers again: export resumed"),
            _ => {}
        }
        for (waiting, count) in waiting {
            match waiting {
                Waiting::Call(done) => {
                    let _ = done.send(outcome.clone());
                }
                Waiting::Nobody { request_id, what } => {
                    // While the breaker is open, its own line says it all.
                    if let (Err(err), true) = (&outcome, closed) {
                        tracing::warn!(request_id = %request_id, spans = count, error = %err, "{what} not exported");
                    }
                }
            }
        }
    }
}

/// One flush: `spans` and the metrics collected now, each in one request
/// (sent together), within the flush timeout.
async fn flush(inner: &Inner, spans: Vec<SpanData>) -> Flushed {
    let bound = inner.flush_timeout;
    let traces = async {
        match &inner.spans {
            Some(exporter) if !spans.is_empty() => match tokio::time::timeout(bound, exporter.export(spans)).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(err)) => Err(format!("spans: {err}")),
                Err(_) => Err(format!("spans: no answer within {} ms", bound.as_millis())),
            },
            _ => Ok(()),
        }
    };
    let metrics = async {
        let Some((metrics, exporter)) = &inner.metrics else {
            return Ok(());
        };
        let Some(collected) = metrics.collect() else {
            return Ok(());
        };
        match tokio::time::timeout(bound, exporter.export(&collected)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("metrics: {err}")),
            Err(_) => Err(format!("metrics: no answer within {} ms", bound.as_millis())),
        }
    };
    match tokio::join!(traces, metrics) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(err), Ok(())) | (Ok(()), Err(err)) => Err(err),
        (Err(traces), Err(metrics)) => Err(format!("{traces}; {metrics}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call with no spans that waits for its flush.
    fn waiting(done: oneshot::Sender<Flushed>) -> Pending {
        Pending {
            spans: Vec::new(),
            waiting: Waiting::Call(done),
        }
    }

    fn nobody() -> Pending {
        Pending {
            spans: Vec::new(),
            waiting: Waiting::Nobody {
                request_id: "r".to_owned(),
                what: "spans",
            },
        }
    }

    #[test]
    fn the_queue_holds_at_most_its_cap_dropping_the_oldest_and_tells_a_waiting_call() {
        let mut queue = Queue::default();
        let now = Instant::now();
        let (done, mut heard) = oneshot::channel();
        queue.push(waiting(done), now);
        for _ in 1..MAX_QUEUED {
            queue.push(nobody(), now);
        }
        assert_eq!(queue.pending.len(), MAX_QUEUED);
        assert!(heard.try_recv().is_err(), "nothing dropped yet");
        queue.push(nobody(), now);
        assert_eq!(queue.pending.len(), MAX_QUEUED);
        assert_eq!(queue.most_queued, MAX_QUEUED);
        assert!(matches!(heard.try_recv(), Ok(Err(message)) if message.contains("dropped")));
    }

    #[test]
    fn drops_are_warned_at_most_once_a_minute() {
        let mut queue = Queue::default();
        let start = Instant::now();
        // As if pushes had dropped calls of 3 spans, then 2.
        queue.unwarned = 3;
        let first = queue.push(nobody(), start);
        assert_eq!(first.warn, Some(3));
        queue.unwarned = 2;
        assert_eq!(queue.push(nobody(), start + Duration::from_secs(30)).warn, None);
        assert_eq!(queue.unwarned, 2, "kept for the next line");
        assert_eq!(queue.push(nobody(), start + Duration::from_secs(61)).warn, Some(2));
    }

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_probes_later_and_closes_on_success() {
        let mut queue = Queue::default();
        let now = Instant::now();
        let failed: Flushed = Err("no answer".to_owned());
        assert_eq!(queue.flushed(&failed, now), None);
        assert_eq!(queue.flushed(&Ok(()), now), None, "a success resets the count");
        assert_eq!(queue.flushed(&failed, now), None);
        assert_eq!(queue.flushed(&failed, now), None);
        let (done, mut heard) = oneshot::channel();
        queue.push(waiting(done), now);
        assert_eq!(queue.flushed(&failed, now), Some(Breaker::Opened));
        assert!(matches!(heard.try_recv(), Ok(Err(_))), "a waiting call is told at once");
        assert!(!queue.closed());
        assert!(
            !queue.may_send(now + Duration::from_secs(1)),
            "no flush before the probe"
        );
        assert!(queue.may_send(now + PROBE_AFTER), "the probe");
        assert!(
            !queue.may_send(now + PROBE_AFTER + Duration::from_secs(1)),
            "one probe per period"
        );
        let (done, mut heard) = oneshot::channel();
        queue.push(waiting(done), now);
        assert_eq!(queue.flushed(&failed, now + PROBE_AFTER), None, "still open");
        assert!(
            matches!(heard.try_recv(), Ok(Err(_))),
            "a call waiting for a failed probe is told at once"
        );
        assert_eq!(queue.flushed(&Ok(()), now + 2 * PROBE_AFTER), Some(Breaker::Closed));
        assert!(queue.closed());
        assert!(queue.may_send(now));
    }
}
