//! The CPU floor of one DynamoDB request through draftline's client: the
//! AWS SDK's orchestrator (serialisation, endpoint, SigV4, retries,
//! timeouts, interceptors) and the transport, with nothing of draftline
//! around it. `scripts/bench.py --only floor` runs it against the engine of
//! a `draftline serve`.
//!
//! ```text
//! request_floor <endpoint> <table> [requests] [concurrency] [options [rounds]]
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
//!
//! With `options`, it then measures the SDK's options one at a time
//! ([`ClientOptions`]: identity cache, retry token bucket, retries, fixed
//! endpoint, draftline's interceptor, the SDK's header interceptors,
//! stalled-stream protection), each a client of its own that differs from
//! production's in that one option: `rounds` rounds (default 5), every
//! variant once per round in turn (so drift on a noisy machine falls on
//! all alike), `GetItem` and `PutItem` at the concurrency. It prints each
//! variant's median CPU per request over the rounds and its difference
//! from production's median.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use draftline_dynamo::{ClientOptions, Db, Retries, SdkHeaders};
use futures::stream::{self, StreamExt};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU time of the process's live threads, user + system, in nanoseconds
/// (`/proc/self/task/*/schedstat`, whose first field is the time a thread
/// ran: finer than `/proc/self/stat`'s 10 ms ticks, which at ~50 µs a
/// request would be a 5 % step over 4000 requests).
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let nanos: u64 = tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next().and_then(|ran| ran.parse::<u64>().ok()))
        .sum();
    nanos as f64 / 1e9
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

fn item_key() -> std::collections::HashMap<String, AttributeValue> {
    [
        ("pk", AttributeValue::S("T#demo#ITEM".to_owned())),
        ("sk", AttributeValue::S("ITEM#BRG-0042".to_owned())),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect()
}

async fn get(db: &Db) -> bool {
    db.client()
        .get_item()
        .table_name(db.table())
        .set_key(Some(item_key()))
        .send()
        .await
        .is_ok_and(|out| out.item.is_some())
}

async fn query(db: &Db) -> bool {
    db.client()
        .query()
        .table_name(db.table())
        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
        .expression_attribute_values(":pk", AttributeValue::S("T#demo#B#SBY-01#STOCK".to_owned()))
        .expression_attribute_values(":prefix", AttributeValue::S("ITEM#BRG-0042#".to_owned()))
        .send()
        .await
        .is_ok_and(|out| out.count > 0)
}

static MINTED: AtomicU64 = AtomicU64::new(0);

/// A new audit-sized item under `BENCH#<pid>#<n>`.
fn new_item() -> std::collections::HashMap<String, AttributeValue> {
    let n = MINTED.fetch_add(1, Ordering::Relaxed);
    [
        ("pk", AttributeValue::S(format!("BENCH#{}#{n}", std::process::id()))),
        ("sk", AttributeValue::S("AUDIT".to_owned())),
        ("payload", AttributeValue::S("x".repeat(600))),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect()
}

async fn put(db: &Db) -> bool {
    db.client()
        .put_item()
        .table_name(db.table())
        .set_item(Some(new_item()))
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await
        .is_ok()
}

async fn transact(db: &Db) -> bool {
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
}

/// Production's options but one.
fn variants() -> Vec<(&'static str, ClientOptions)> {
    let production = ClientOptions::default();
    vec![
        ("production", production),
        (
            "no identity cache",
            ClientOptions {
                identity_cache: !production.identity_cache,
                ..production
            },
        ),
        (
            "unlimited token bucket",
            ClientOptions {
                retries: Retries::UnlimitedBucket,
                ..production
            },
        ),
        (
            "retries off",
            ClientOptions {
                retries: Retries::Off,
                ..production
            },
        ),
        (
            "fixed endpoint (toggled)",
            ClientOptions {
                fixed_endpoint: !production.fixed_endpoint,
                ..production
            },
        ),
        (
            "no round-trip counter",
            ClientOptions {
                count_round_trips: !production.count_round_trips,
                ..production
            },
        ),
        (
            "user agent (toggled)",
            ClientOptions {
                sdk_headers: SdkHeaders {
                    user_agent: !production.sdk_headers.user_agent,
                    ..production.sdk_headers
                },
                ..production
            },
        ),
        (
            "invocation id (toggled)",
            ClientOptions {
                sdk_headers: SdkHeaders {
                    invocation_id: !production.sdk_headers.invocation_id,
                    ..production.sdk_headers
                },
                ..production
            },
        ),
        (
            "request info (toggled)",
            ClientOptions {
                sdk_headers: SdkHeaders {
                    request_info: !production.sdk_headers.request_info,
                    ..production.sdk_headers
                },
                ..production
            },
        ),
        (
            "stalled-stream (toggled)",
            ClientOptions {
                stalled_stream_protection: !production.stalled_stream_protection,
                ..production
            },
        ),
    ]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Each variant's `GetItem` and `PutItem` CPU per request, round by round.
async fn options(endpoint: &str, table: &str, requests: usize, concurrency: usize, rounds: usize) {
    let mut clients = Vec::new();
    for (name, options) in variants() {
        let db = Db::connect_with(table, Some(endpoint), options).await;
        // Warm-up: connections, credentials.
        run(concurrency * 20, concurrency, || get(&db)).await;
        run(concurrency * 20, concurrency, || put(&db)).await;
        clients.push((name, options, db, Vec::new(), Vec::new()));
    }
    for round in 1..=rounds {
        for (_, _, db, gets, puts) in &mut clients {
            gets.push(run(requests, concurrency, || get(db)).await.cpu_us);
            puts.push(run(requests, concurrency, || put(db)).await.cpu_us);
        }
        eprintln!("round {round} of {rounds} done");
    }
    println!();
    println!("SDK options, one at a time ({rounds} interleaved rounds of {requests} requests, c={concurrency}):");
    println!("variant                      GetItem µs (median; rounds)                 PutItem µs (median; rounds)");
    let base = clients
        .first()
        .map(|(_, _, _, gets, puts)| (median(gets.clone()), median(puts.clone())))
        .unwrap_or((f64::NAN, f64::NAN));
    for (name, options, _, gets, puts) in &clients {
        let (g, p) = (median(gets.clone()), median(puts.clone()));
        let list = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join("/");
        println!(
            "{:<26} {:>6.0} ({:+5.1} %; {:<22})   {:>6.0} ({:+5.1} %; {})",
            name,
            g,
            (g / base.0 - 1.0) * 100.0,
            list(gets),
            p,
            (p / base.1 - 1.0) * 100.0,
            list(puts)
        );
        if *name != "production" {
            eprintln!("  {name}: {options:?}");
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(endpoint), Some(table)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: request_floor <endpoint> <table> [requests] [concurrency] [options [rounds]]");
        std::process::exit(2);
    };
    let requests: usize = args.get(3).and_then(|n| n.parse().ok()).unwrap_or(5000);
    let concurrency: usize = args.get(4).and_then(|n| n.parse().ok()).unwrap_or(16);
    if args.get(5).map(String::as_str) == Some("options") {
        let rounds: usize = args.get(6).and_then(|n| n.parse().ok()).unwrap_or(5);
        options(endpoint, table, requests, concurrency, rounds).await;
        return;
    }
    let db = Db::connect(table, Some(endpoint)).await;
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
    measure!("GetItem", || get(&db), requests);
    measure!("Query", || query(&db), requests);
    measure!("PutItem", || put(&db), requests);
    measure!("Transact of 8", || transact(&db), transacts);
}
