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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use tokio::sync::oneshot;

use super::otlp::Inner;

/// The most calls one flush carries (each a handful of spans: a request
/// stays far below a collector's usual 4 MiB limit).
const MAX_CALLS: usize = 64;

/// The longest the spans of a call that answered at once wait for a flush
/// while other calls are in flight: a busy instance sends a request per
/// [`MAX_CALLS`] calls or per this time, whichever comes first.
const LINGER: Duration = Duration::from_secs(1);

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
    pending: Vec<Pending>,
    /// A flush task runs.
    flushing: bool,
    /// A task will start a flush after [`LINGER`].
    lingering: bool,
}

impl Queue {
    /// Whether what is pending is to be flushed now: a call waits for it,
    /// or it fills a request.
    fn due(&self) -> bool {
        self.pending.len() >= MAX_CALLS || self.pending.iter().any(|p| matches!(p.waiting, Waiting::Call(_)))
    }
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
        let (outcome, start) = {
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
            let (waiting, outcome) = if last {
                let (done, outcome) = oneshot::channel();
                (Waiting::Call(done), Some(outcome))
            } else {
                let request_id = request_id.to_owned();
                (Waiting::Nobody { request_id, what }, None)
            };
            queue.pending.push(Pending { spans, waiting });
            let start = if queue.flushing {
                // The running flush task takes it next, or leaves it to linger.
                None
            } else if queue.due() {
                queue.flushing = true;
                Some(Start::Flush)
            } else if !std::mem::replace(&mut queue.lingering, true) {
                Some(Start::Linger)
            } else {
                None
            };
            (outcome, start)
        };
        if let Some(start) = start {
            tokio::spawn(flush_task(self.clone(), start));
        }
        outcome
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
            if queue.pending.is_empty() || std::mem::replace(&mut queue.flushing, true) {
                return;
            }
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
            if queue.pending.is_empty() || !(first || queue.due()) {
                queue.flushing = false;
                return !queue.pending.is_empty() && !std::mem::replace(&mut queue.lingering, true);
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
        for (waiting, count) in waiting {
            match waiting {
                Waiting::Call(done) => {
                    let _ = done.send(outcome.clone());
                }
                Waiting::Nobody { request_id, what } => {
                    if let Err(err) = &outcome {
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
