//! A function binary as a Vercel function: `vercel_runtime` serves it on
//! 127.0.0.1:$VERCEL_DEV_PORT (no `VERCEL_IPC_PATH`, as under `vercel dev`),
//! including the platform's `/_vercel/ping` health check.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::function_process::{CHILD_TIMEOUT, FunctionProcess, function_env, function_token, start_vercel_function};
use crate::helpers::{TestApp, spawn_app};

/// A function binary serving under the Vercel runtime on a free port.
pub struct VercelFunction {
    pub process: FunctionProcess,
    pub base: String,
    pub http: reqwest::Client,
}

impl VercelFunction {
    /// Starts `binary` against `app`'s table and waits until it answers `/_vercel/ping`.
    pub async fn start(binary: &str, app: &TestApp) -> Self {
        Self::start_with_env(binary, &function_env(app)).await
    }

    /// Starts `binary` with exactly `env` and waits until it answers `/_vercel/ping`.
    pub async fn start_with_env(binary: &str, env: &[(String, String)]) -> Self {
        draftline_contract::crypto::install_crypto_provider();
        let (process, port) = start_vercel_function(binary, env).await;
        let function = Self {
            process,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        };
        let deadline = Instant::now() + CHILD_TIMEOUT;
        loop {
            match function.http.get(function.url("/_vercel/ping")).send().await {
                Ok(response) if response.status() == 200 => return function,
                _ => {
                    assert!(
                        Instant::now() < deadline,
                        "the function never answered /_vercel/ping\n{}",
                        function.process.output()
                    );
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            }
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// POSTs `body` to `path` with `headers`; status, headers and JSON body.
    pub async fn post(
        &self,
        path: &str,
        headers: &[(&str, String)],
        body: String,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self
            .http
            .post(self.url(path))
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.expect("the function answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("the body is JSON: {text}"));
        (status, headers, body)
    }
}

#[tokio::test]
async fn a_tool_binary_serves_ping_and_a_tool_call_as_a_vercel_function() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_inventory_get_stock"), &app).await;

    let ping = function.http.get(function.url("/_vercel/ping")).send().await.unwrap();
    assert_eq!(ping.status(), 200);
    assert_eq!(ping.text().await.unwrap(), "OK");

    let token = function_token("buyer-sby");
    let (status, headers, body) = function
        .post(
            "/api/inventory_get_stock",
            &[
                ("authorization", format!("Bearer {token}")),
                ("x-request-id", "vercel-read-1".into()),
            ],
            json!({"item_code": "BRG-0042"}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body:?}\n{}", function.process.output());
    assert_eq!(headers["x-request-id"], "vercel-read-1");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["ok"], true);
    assert_eq!(body["data"]["branch_id"], "SBY-01");
    assert_eq!(body["data"]["total_on_hand"], 40);

    // A function serves its one tool whatever the path a rewrite hands it.
    let (status, _, body) = function
        .post(
            "/",
            &[("authorization", format!("Bearer {token}"))],
            json!({"item_code": "BRG-0042"}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body:?}");

    let get = function
        .http
        .get(function.url("/api/inventory_get_stock"))
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST");

    let (status, headers, body) = function
        .post(
            "/api/inventory_get_stock",
            &[],
            json!({"item_code": "BRG-0042"}).to_string(),
        )
        .await;
    assert_eq!(status, 401, "{body:?}");
    assert!(headers.contains_key("www-authenticate"));

    function
        .process
        .assert_never_printed(crate::function_process::FUNCTION_SECRET, "the JWT secret");
    function.process.assert_never_printed(&token, "the bearer token");
}

#[tokio::test]
async fn the_metadata_binary_serves_the_protected_resource_document_as_a_vercel_function() {
    let app = spawn_app().await;
    let function = VercelFunction::start(env!("CARGO_BIN_EXE_oauth_protected_resource"), &app).await;
    let response = function
        .http
        .get(function.url("/.well-known/oauth-protected-resource"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["resource"], crate::function_process::FUNCTION_RESOURCE);
    assert_eq!(
        body["authorization_servers"],
        json!([draftline_server::config::LOCAL_ISSUER])
    );
}
