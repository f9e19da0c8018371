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
//! one item's stock records, `concurrency` at a time on one runtime thread
//! (as a deployed function serves), and prints the process's CPU time
//! (user + system) per request after a warm-up. It allocates with
//! mimalloc, as the functions do.

use std::time::Instant;

use aws_sdk_dynamodb::types::AttributeValue;
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

async fn run<F, Fut>(requests: usize, concurrency: usize, one: F) -> (f64, f64)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    let before = cpu_seconds();
    let ok = stream::iter(0..requests)
        .map(|_| one())
        .buffer_unordered(concurrency)
        .filter(|ok| std::future::ready(*ok))
        .count()
        .await;
    assert_eq!(ok, requests, "every request must succeed");
    let used = cpu_seconds() - before;
    (
        used / requests as f64 * 1e6,
        requests as f64 / started.elapsed().as_secs_f64(),
    )
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
    // Warm-up: connections, credentials, endpoint caches.
    run(concurrency * 20, concurrency, get).await;
    let (get_cpu, get_rate) = run(requests, concurrency, get).await;
    run(concurrency * 20, concurrency, query).await;
    let (query_cpu, query_rate) = run(requests, concurrency, query).await;
    println!(
        "GetItem n={requests} c={concurrency}  CPU {get_cpu:6.0} µs/request  {get_rate:6.0} req/s\n\
         Query   n={requests} c={concurrency}  CPU {query_cpu:6.0} µs/request  {query_rate:6.0} req/s"
    );
}
