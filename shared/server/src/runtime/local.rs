//! The local server: every function on one loopback port, as `draftline
//! serve` and the tests use it. Routes:
//!
//! - `POST /api/mcp`: the stateless MCP endpoint;
//! - `POST /api/<tool>`: the tool function;
//! - `GET /.well-known/oauth-protected-resource` (also with the `/api/mcp`
//!   suffix): RFC 9728 metadata;
//! - `GET /api/tools?format=…`: the caller's tool list;
//! - `GET /healthz`: liveness;
//! - everything under the prefix of the app's [`Pages`](crate::pages::Pages)
//!   handler (`/review`), when it has one.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

use super::vercel::read_body;
use crate::edge::Admitted;
use crate::pipeline::App;
use crate::response;

/// The RFC 9728 metadata response (public: no origin check, no identity).
pub fn metadata_response(app: &App, request: &Admitted) -> Response<Bytes> {
    let mut response = response::json(StatusCode::OK, &app.protected_resource_metadata(), request.request_id());
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// Routes one request of the local server. Each is served as the deployed
/// function that would serve it (its DynamoDB requests are recorded as
/// that function's: [`draftline_dynamo::grants`]).
pub async fn route(app: &App, request: Admitted) -> Response<Bytes> {
    let path = request.parts.uri.path().trim_end_matches('/').to_owned();
    if path == "/.well-known/oauth-protected-resource"
        || path == "/.well-known/oauth-protected-resource/api/mcp"
        || path == "/api/oauth_protected_resource"
    {
        let response = async { metadata_response(app, &request) };
        return app.serving("oauth_protected_resource", response).await;
    }
    if path == "/healthz" {
        return response::json(StatusCode::OK, &json!({"ok": true}), request.request_id());
    }
    if let Some(pages) = app.pages()
        && crate::pages::owns(pages.prefix(), &path)
    {
        // The pages function is named by its prefix (`/review`: `review`).
        let function = pages.prefix().trim_start_matches('/');
        return app.serving(function, pages.handle(app, request)).await;
    }
    if path == "/api/tools" {
        return app.serving("tools", crate::listing::handle(app, request)).await;
    }
    if path == "/api/mcp" {
        return app.serving("mcp", crate::mcp::handle(app, request)).await;
    }
    if let Some(name) = path.strip_prefix("/api/")
        && let Some(tool) = app.registry().get(name)
    {
        let name = tool.definition().name;
        return app.serving(name, app.handle_tool(name, request)).await;
    }
    let request_id = request.request_id();
    response::json(
        StatusCode::NOT_FOUND,
        &json!({
            "ok": false,
            "error": {
                "code": "NOT_FOUND",
                "message": format!(
                    "Nothing is served at {}. Tools are called with POST /api/<tool name>.",
                    path.chars().take(80).collect::<String>()
                ),
                "retryable": false
            },
            "requestId": request_id
        }),
        request_id,
    )
}

/// Serves `app` on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, app: Arc<App>) -> std::io::Result<()> {
    loop {
        let (stream, _peer): (_, SocketAddr) = listener.accept().await?;
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                let app = app.clone();
                async move {
                    let (parts, body) = request.into_parts();
                    let body = read_body(body).await;
                    let admitted = Admitted::new(Request::from_parts(parts, body), &app.config().resource);
                    let response = route(&app, admitted).await;
                    Ok::<_, std::convert::Infallible>(response.map(http_body_util::Full::new))
                }
            });
            if let Err(err) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %err, "connection closed with an error");
            }
        });
    }
}
