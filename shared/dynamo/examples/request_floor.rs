//! The CPU floor of one DynamoDB request through draftline's client: the
//! AWS SDK's orchestrator (serialisation, endpoint, SigV4, retries,
//! timeouts, interceptors) and the transport, with nothing of draftline
//! around it. `scripts/bench.py --only floor` runs it against the engine of
//! a `draftline serve`.
//!
//! ```text
//! request_floor <endpoint> <table> [requests] [concurrency]
//! ```
//!
//! Sends `requests` `GetItem`s of one demo item, then as many `Query`s of
//! one item's stock records, conditional `PutItem`s of new items (an
//! audit item written alone) and `TransactWriteItems` of 8 such puts (the
//! audit items of 8 concurrent calls written together), `concurrency` at a
//! time on one runtime thread (as a deployed function serves), and prints
//! the process's CPU time (user + system) per request after a warm-up, and
//! each request's latency (p50 and p99), at that concurrency and alone. It
//! allocates with mimalloc, as the functions do. The items it puts are
//! under `BENCH#<pid>#…`: run it against a table it may write to.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use draftline_dynamo::Db;
use futures::stream::{self, StreamExt};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU time of the process, user + system, every thread (`/proc/self/stat`,
/// in clock ticks of 10 ms: run enough requests for that not to matter).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses: utime and
    // stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|field| field.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}

/// What one kind of request cost: CPU per request (µs), requests per
/// second, and latency p50 and p99 (ms).
struct Cost {
    cpu_us: f64,
    rate: f64,
    p50_ms: f64,
    p99_ms: f64,
}

async fn run<F, Fut>(requests: usize, concurrency: usize, one: F) -> Cost
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    let before = cpu_seconds();
    let mut latencies: Vec<Duration> = stream::iter(0..requests)
        .map(|_| async {
            let sent = Instant::now();
            one().await.then(|| sent.elapsed())
        })
        .buffer_unordered(concurrency)
        .filter_map(std::future::ready)
        .collect()
        .await;
    assert_eq!(latencies.len(), requests, "every request must succeed");
    let used = cpu_seconds() - before;
    latencies.sort_unstable();
    let at = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)].as_secs_f64() * 1e3;
    Cost {
        cpu_us: used / requests as f64 * 1e6,
        rate: requests as f64 / started.elapsed().as_secs_f64(),
        p50_ms: at(50),
        p99_ms: at(99),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(endpoint), Some(table)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: request_floor <endpoint> <table> [requests] [concurrency]");
        std::process::exit(2);
    };
    let requests: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(5000);
    let concurrency: usize = args.get(4).and_then(|n| n.parse().ok()).unwrap_or(16);
    let db = Db::connect(table, Some(endpoint)).await;

    let get = || async {
        db.client()
            .get_item()
            .table_name(db.table())
            .key("pk", AttributeValue::S("T#demo#ITEM".to_owned()))
            .key("sk", AttributeValue::S("ITEM#BRG-0042".to_owned()))
            .send()
            .await
            .is_ok_and(|out| out.item.is_some())
    };
    let query = || async {
        db.client()
            .query()
            .table_name(db.table())
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", AttributeValue::S("T#demo#B#SBY-01#STOCK".to_owned()))
            .expression_attribute_values(":prefix", AttributeValue::S("ITEM#BRG-0042#".to_owned()))
            .send()
            .await
            .is_ok_and(|out| out.count > 0)
    };
    let minted = AtomicU64::new(0);
    let new_item = || {
        let n = minted.fetch_add(1, Ordering::Relaxed);
        [
            ("pk", AttributeValue::S(format!("BENCH#{}#{n}", std::process::id()))),
            ("sk", AttributeValue::S("AUDIT".to_owned())),
            ("payload", AttributeValue::S("x".repeat(600))),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect::<std::collections::HashMap<_, _>>()
    };
    let put = || async {
        db.client()
            .put_item()
            .table_name(db.table())
            .set_item(Some(new_item()))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await
            .is_ok()
    };
    let transact = || async {
        let actions = (0..8)
            .filter_map(|_| {
                Put::builder()
                    .table_name(db.table())
                    .set_item(Some(new_item()))
                    .condition_expression("attribute_not_exists(pk)")
                    .build()
                    .ok()
            })
            .map(|put| TransactWriteItem::builder().put(put).build())
            .collect();
        db.client()
            .transact_write_items()
            .set_transact_items(Some(actions))
            .send()
            .await
            .is_ok()
    };
    let transacts = (requests / 8).max(100);
    let lone = (requests / 10).max(100);
    // Each kind: a warm-up (connections, credentials, endpoint caches),
    // then `requests` at the concurrency, then requests one at a time.
    println!("request            n     c   CPU µs/request   req/s   p50 ms   p99 ms   alone: p50 ms  p99 ms");
    macro_rules! measure {
        ($name:literal, $one:expr, $n:expr) => {{
            run(concurrency * 20, concurrency, $one).await;
            let loaded = run($n, concurrency, $one).await;
            let alone = run(lone, 1, $one).await;
            println!(
                "{:<14} {:>6} {:>5}   {:>10.0}   {:>9.0}   {:>6.2}   {:>6.2}   {:>13.2}  {:>6.2}",
                $name,
                $n,
                concurrency,
                loaded.cpu_us,
                loaded.rate,
                loaded.p50_ms,
                loaded.p99_ms,
                alone.p50_ms,
                alone.p99_ms
            );
        }};
    }
    measure!("GetItem", get, requests);
    measure!("Query", query, requests);
    measure!("PutItem", put, requests);
    measure!("Transact of 8", transact, transacts);
}
