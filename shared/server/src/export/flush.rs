//! A call's telemetry leaves before its answer, and calls served at the
//! same time share the requests that carry it: group commit, as the audit
//! writer does for audit items (`draftline_dynamo::append`).
//!
//! A call hands its spans to the queue and waits for the flush that takes
//! them. The flush is a task of its own, started by the first call of a
//! burst: it takes everything queued, collects the metrics once, and sends
//! one traces request and one metrics request (at the same time); the calls
//! that arrived meanwhile go in the next flush. A call that stops waiting
//! (its bound) never cancels the flush the others wait for. One call at a
//! time, as on Lambda, is one flush per call.

use std::sync::{Arc, Mutex};

use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use tokio::sync::oneshot;

use super::otlp::Inner;

/// The most calls one flush carries (each a handful of spans: a request
/// stays far below a collector's usual 4 MiB limit).
const MAX_CALLS: usize = 64;

/// What a flush tells the calls it carried: `Ok`, or what failed.
pub(super) type Flushed = Result<(), String>;

/// A call's spans, and where the flush's outcome goes.
struct Pending {
    spans: Vec<SpanData>,
    done: oneshot::Sender<Flushed>,
}

#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    flushing: bool,
}

/// The calls waiting for a flush on one warm instance.
#[derive(Default)]
pub(super) struct Flusher {
    queue: Mutex<Queue>,
}

impl std::fmt::Debug for Flusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flusher").finish_non_exhaustive()
    }
}

impl Inner {
    /// Queues `spans` (the metrics are already recorded) and returns a
    /// receiver of the outcome of the flush that carries them.
    pub(super) fn queue(self: &Arc<Self>, spans: Vec<SpanData>) -> oneshot::Receiver<Flushed> {
        let (done, outcome) = oneshot::channel();
        let start = {
            let mut queue = self.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.pending.push(Pending { spans, done });
            !std::mem::replace(&mut queue.flushing, true)
        };
        if start {
            tokio::spawn(flush_all(self.clone()));
        }
        outcome
    }
}

/// Flushes what is queued, a group at a time, until the queue is empty.
async fn flush_all(inner: Arc<Inner>) {
    loop {
        let group: Vec<Pending> = {
            let mut queue = inner.flusher.queue.lock().unwrap_or_else(|p| p.into_inner());
            if queue.pending.is_empty() {
                queue.flushing = false;
                return;
            }
            let n = queue.pending.len().min(MAX_CALLS);
            queue.pending.drain(..n).collect()
        };
        let (spans, waiting): (Vec<Vec<SpanData>>, Vec<oneshot::Sender<Flushed>>) =
            group.into_iter().map(|pending| (pending.spans, pending.done)).unzip();
        let outcome = flush(&inner, spans.into_iter().flatten().collect()).await;
        for done in waiting {
            let _ = done.send(outcome.clone());
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
