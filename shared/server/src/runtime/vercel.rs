//! The Vercel adapter: `vercel_runtime` hands us a hyper request with a
//! streaming body; we read it (bounded) into `Bytes`, run the pipeline, and
//! hand the response back.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};

use super::Serve;
use crate::pipeline::App;
use draftline_contract::validation::MAX_BODY_BYTES;

/// Reads a body of at most `MAX_BODY_BYTES` (+1 so the pipeline can tell
/// "too large" from "exactly at the limit").
pub(crate) async fn read_body<B>(body: B) -> Bytes
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, MAX_BODY_BYTES + 1).collect().await {
        Ok(collected) => collected.to_bytes(),
        // Over the limit (or a broken stream): an oversize body makes the
        // pipeline answer 400 without parsing it.
        Err(_) => Bytes::from(vec![b' '; MAX_BODY_BYTES + 1]),
    }
}

/// Serves `function` under the Vercel runtime until the platform stops it.
pub async fn run(app: Arc<App>, function: impl Serve) -> Result<(), vercel_runtime::Error> {
    let handler = move |request: vercel_runtime::Request| {
        let app = app.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = read_body(body).await;
            let admitted = crate::edge::Admitted::new(http::Request::from_parts(parts, body), &app.config().resource);
            let response = function.serve(&app, admitted).await;
            let (parts, body) = response.into_parts();
            Ok::<_, vercel_runtime::Error>(http::Response::from_parts(
                parts,
                vercel_runtime::ResponseBody::from(body),
            ))
        }
    };
    vercel_runtime::run(vercel_runtime::service_fn(handler)).await
}
