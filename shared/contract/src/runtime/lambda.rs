//! The AWS Lambda adapter: `lambda_http` turns API Gateway (REST and HTTP
//! API), Function URL and ALB events into `http::Request`s; we run the same
//! pipeline and return an `http::Response`.

use std::sync::Arc;

use bytes::Bytes;
use lambda_http::{Body, service_fn};

use super::Function;
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

/// Serves `function` on AWS Lambda until the runtime stops it.
pub async fn run(app: Arc<App>, function: Function) -> Result<(), lambda_http::Error> {
    lambda_http::run(service_fn(move |request: lambda_http::Request| {
        let app = app.clone();
        async move {
            let (parts, body) = request.into_parts();
            let response = super::serve(&app, function, http::Request::from_parts(parts, body_bytes(body))).await;
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
