//! The notify function (`api/notify.rs`, issue 46 step 6) as each platform
//! runs it: the real binary.
//!
//! - On AWS Lambda, a local implementation of the Lambda Runtime API hands
//!   it the records of the table's own DynamoDB Stream, read from the
//!   embedded engine's Streams API as Lambda's event source mapping reads
//!   them, and EventBridge Scheduler's event.
//! - On Vercel, it serves the cron's call under the Vercel runtime, and
//!   refuses every call without `CRON_SECRET`.
//!
//! The receiver is a real HTTP server, and each signature is checked with
//! HMAC computed here.

use serde_json::{Value, json};

use crate::function_process::{CHILD_TIMEOUT, FunctionProcess, function_env};
use crate::helpers::{TestApp, po_input, spawn_app};
use crate::lambda::{LambdaRuntimeApi, Outcome, lambda_env};
use crate::vercel::VercelFunction;
use crate::webhooks::{Endpoint, SECRET, expected_signature, set_endpoints};

/// The table's stream on the embedded engine, read through the DynamoDB
/// Streams API (`DynamoDBStreams_20120810.*`) from where it stood when
/// opened.
struct TableStream {
    http: reqwest::Client,
    endpoint: String,
    arn: String,
    iterator: String,
}

impl TableStream {
    async fn call(http: &reqwest::Client, endpoint: &str, action: &str, body: Value) -> Value {
        let response = http
            .post(endpoint)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("DynamoDBStreams_20120810.{action}"))
            // The engine wants a signature's shape, and checks no key.
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=local/20261129/us-east-1/dynamodb/aws4_request, \
                 SignedHeaders=host;x-amz-date;x-amz-target, Signature=0",
            )
            .header("x-amz-date", "20261129T090000Z")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status();
        let answer: Value = response.json().await.unwrap();
        assert!(status.is_success(), "{action}: {status} {answer}");
        answer
    }

    /// The stream of `app`'s table, from its latest record on.
    async fn latest(app: &TestApp) -> Self {
        let config = app.server.app.config();
        let endpoint = config.dynamodb_endpoint.clone().unwrap();
        let http = reqwest::Client::new();
        let listed = Self::call(&http, &endpoint, "ListStreams", json!({"TableName": config.table})).await;
        let arn = listed["Streams"][0]["StreamArn"]
            .as_str()
            .unwrap_or_else(|| panic!("the table has a stream (infra/dynamodb/table.json): {listed}"))
            .to_owned();
        let described = Self::call(&http, &endpoint, "DescribeStream", json!({"StreamArn": arn})).await;
        let shards = described["StreamDescription"]["Shards"].as_array().unwrap();
        assert_eq!(shards.len(), 1, "{described}");
        let opened = Self::call(
            &http,
            &endpoint,
            "GetShardIterator",
            json!({"StreamArn": arn, "ShardId": shards[0]["ShardId"], "ShardIteratorType": "LATEST"}),
        )
        .await;
        let iterator = opened["ShardIterator"].as_str().unwrap().to_owned();
        Self {
            http,
            endpoint,
            arn,
            iterator,
        }
    }

    /// The records written since the last read, as the event Lambda's
    /// event source mapping invokes a function with (each record with its
    /// `eventSourceARN`).
    async fn batch(&mut self) -> Value {
        let read = Self::call(
            &self.http,
            &self.endpoint,
            "GetRecords",
            json!({"ShardIterator": self.iterator}),
        )
        .await;
        if let Some(next) = read["NextShardIterator"].as_str() {
            self.iterator = next.to_owned();
        }
        let records: Vec<Value> = read["Records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|record| {
                let mut record = record.clone();
                record["eventSourceARN"] = json!(self.arn);
                record
            })
            .collect();
        json!({ "Records": records })
    }
}

/// The answer of an invocation (never an invocation error).
fn answer(outcome: Outcome) -> Value {
    match outcome {
        Outcome::Response(answer) => answer,
        Outcome::Error(report) => panic!("the notify function failed an invocation: {report}"),
    }
}

/// The kinds and event names of a stream batch's records.
fn described(batch: &Value) -> Vec<(String, String)> {
    batch["Records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| {
            (
                record["dynamodb"]["NewImage"]["kind"]["S"]
                    .as_str()
                    .unwrap_or("-")
                    .to_owned(),
                record["eventName"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The demo tenant's one endpoint, `endpoint`, for `draft.created`.
async fn one_endpoint(app: &TestApp, endpoint: &Endpoint) {
    set_endpoints(
        app,
        json!([{"id": "orchestrator", "url": endpoint.url, "events": ["draft.created"], "secrets": [SECRET]}]),
    )
    .await;
}

/// The function's environment against `app`'s table, loopback endpoints allowed.
fn notify_env(app: &TestApp) -> Vec<(String, String)> {
    let mut env = function_env(app);
    env.push(("DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK".into(), "1".into()));
    env
}

#[tokio::test]
async fn on_lambda_the_tables_stream_brings_a_drafts_webhook_and_the_schedule_sweeps_what_is_due() {
    let app = spawn_app().await;
    let endpoint = Endpoint::start(vec![]).await;
    one_endpoint(&app, &endpoint).await;
    let mut stream = TableStream::latest(&app).await;
    let drafted = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("notify-1"),
            &[("idempotency-key", "notify-1".to_owned())],
        )
        .await;
    assert_eq!(drafted.status, 201, "{:?}", drafted.body);
    let committed = stream.batch().await;
    assert!(
        described(&committed).contains(&("event".to_owned(), "INSERT".to_owned())),
        "the draft's transaction wrote its event: {:?}",
        described(&committed)
    );

    let runtime = LambdaRuntimeApi::start().await;
    let _function = FunctionProcess::start(
        env!("CARGO_BIN_EXE_notify"),
        &lambda_env(&runtime, notify_env(&app), "notify"),
    );
    let round = answer(runtime.invoke(committed).await);
    assert_eq!(
        (&round["swept"], &round["fanned_out"], &round["delivered"]),
        (&json!(true), &json!(1), &json!(1)),
        "{round}"
    );
    let got = endpoint.received();
    assert_eq!(got.len(), 1, "one webhook, from the stream's batch");
    assert_eq!(got[0].header("webhook-signature"), expected_signature(SECRET, &got[0]));
    assert_eq!(
        got[0].json()["data"]["document"]["number"],
        drafted.body["data"]["po_number"]
    );

    // The sweep's own writes come back on the stream; none asks for another.
    let echo = stream.batch().await;
    assert!(
        described(&echo).contains(&("delivery".to_owned(), "INSERT".to_owned())),
        "{:?}",
        described(&echo)
    );
    let round = answer(runtime.invoke(echo).await);
    assert_eq!(round["swept"], false, "{round}");

    // A batch that does not parse never fails: that would block the shard.
    let round = answer(runtime.invoke(json!({"Records": [{"not": "a record"}]})).await);
    assert_eq!(round["swept"], false, "{round}");

    // EventBridge Scheduler's event: a sweep, with nothing due.
    let round = answer(runtime.invoke(json!({"source": "draftline.schedule"})).await);
    assert_eq!(
        (&round["swept"], &round["delivered"], &round["polled"]),
        (&json!(true), &json!(0), &json!(0)),
        "{round}"
    );
    assert_eq!(endpoint.received().len(), 1, "still the one webhook");
}

#[tokio::test]
async fn on_vercel_the_cron_sweeps_with_its_secret_and_every_other_call_is_refused() {
    let app = spawn_app().await;
    let endpoint = Endpoint::start(vec![]).await;
    one_endpoint(&app, &endpoint).await;
    let drafted = app
        .call(
            "buyer-sby",
            "purchasing_create_po_draft",
            &po_input("notify-2"),
            &[("idempotency-key", "notify-2".to_owned())],
        )
        .await;
    assert_eq!(drafted.status, 201, "{:?}", drafted.body);

    // Without CRON_SECRET, the function does not start, and says why.
    let mut refused = FunctionProcess::start(env!("CARGO_BIN_EXE_notify"), &notify_env(&app));
    let status = refused.wait_exit(CHILD_TIMEOUT).await;
    assert_eq!(status.code(), Some(1), "{}", refused.output());
    assert!(
        refused.output().contains("CRON_SECRET is not set"),
        "{}",
        refused.output()
    );

    let secret = "cron-secret-for-the-notify-test-5d1f";
    let mut env = notify_env(&app);
    env.push(("CRON_SECRET".into(), secret.into()));
    let function = VercelFunction::start_with_env(env!("CARGO_BIN_EXE_notify"), &env).await;
    let cron = |method: reqwest::Method, bearer: Option<&str>| {
        let mut request = function.http.request(method, function.url("/api/notify"));
        if let Some(bearer) = bearer {
            request = request.header("authorization", format!("Bearer {bearer}"));
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    for bearer in [None, Some("not-the-secret"), Some("")] {
        let (status, body) = cron(reqwest::Method::GET, bearer).await;
        assert_eq!(status, 401, "{bearer:?}: {body}");
        assert_eq!(body["error"]["code"], "UNAUTHENTICATED");
        assert!(body["error"]["message"].as_str().unwrap().contains("CRON_SECRET"));
    }
    let (status, _) = cron(reqwest::Method::PUT, Some(secret)).await;
    assert_eq!(status, 405);
    assert!(endpoint.received().is_empty(), "a refused call sends nothing");

    let (status, body) = cron(reqwest::Method::GET, Some(secret)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["data"]["swept"], &body["data"]["delivered"]),
        (&json!(true), &json!(1)),
        "{body}"
    );
    let got = endpoint.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("webhook-signature"), expected_signature(SECRET, &got[0]));
    function.process.assert_never_printed(secret, "the cron secret");
}
