//! The AWS Lambda adapter: `lambda_http` turns API Gateway (REST and HTTP
//! API), Function URL and ALB events into `http::Request`s; we run the same
//! pipeline and return an `http::Response`.

use std::sync::Arc;

use bytes::Bytes;
use lambda_http::{Body, RequestExt, service_fn};

use super::Serve;
use crate::pipeline::App;

fn body_bytes(body: Body) -> Bytes {
    match body {
        Body::Empty => Bytes::new(),
        Body::Text(text) => Bytes::from(text),
        Body::Binary(bytes) => Bytes::from(bytes),
        // Future body kinds: treat as empty, the pipeline will say what is missing.
        #[allow(unreachable_patterns)]
        _ => Bytes::new(),
    }
}

/// Tells the Lambda Runtime API why the function cannot start
/// (`POST /2018-06-01/runtime/init/error`), so the failure shows as a
/// configuration error in the invocation's logs rather than a bare exit.
/// Best effort, bounded to two seconds: the process exits non-zero anyway.
pub async fn report_init_error(runtime_api: &str, message: &str) {
    let body = serde_json::json!({"errorMessage": message, "errorType": "Runtime.ConfigError"});
    let request = http::Request::post(format!("http://{runtime_api}/2018-06-01/runtime/init/error"))
        .header("Lambda-Runtime-Function-Error-Type", "Runtime.ConfigError")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(bytes::Bytes::from(body.to_string()));
    let limits = draftline_http::Limits {
        timeout: Some(std::time::Duration::from_secs(2)),
        max_body: 64 * 1024,
    };
    let sent = match request {
        Ok(request) => draftline_http::Client::new(std::time::Duration::from_secs(2))
            .send(request, limits)
            .await
            .map(drop)
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(err) = sent {
        tracing::warn!(error = %err, "could not report the start-up error to the Lambda Runtime API");
    }
}

/// Serves `function` on AWS Lambda until the runtime stops it.
pub async fn run(app: Arc<App>, function: impl Serve) -> Result<(), lambda_http::Error> {
    lambda_http::run(service_fn(move |request: lambda_http::Request| {
        let app = app.clone();
        async move {
            // Without a caller's X-Request-Id, the Lambda request id names the
            // call, so the log line, the audit item and CloudWatch agree.
            let lambda_request_id = request.lambda_context_ref().map(|c| c.request_id.clone());
            let time_left = request.lambda_context_ref().and_then(|c| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?;
                std::time::Duration::from_millis(c.deadline).checked_sub(now)
            });
            let (mut parts, body) = request.into_parts();
            if let Some(left) = time_left {
                parts.extensions.insert(crate::edge::TimeLeft(left));
            }
            let admitted = crate::edge::Admitted::with_platform_id(
                http::Request::from_parts(parts, body_bytes(body)),
                &app.config().resource,
                lambda_request_id,
            );
            let response = function.serve(&app, admitted).await;
            let (parts, body) = response.into_parts();
            let body = match String::from_utf8(body.to_vec()) {
                Ok(text) => Body::Text(text),
                Err(bytes) => Body::Binary(bytes.into_bytes()),
            };
            Ok::<_, lambda_http::Error>(http::Response::from_parts(parts, body))
        }
    }))
    .await
}
