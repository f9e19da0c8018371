//! Where the pipeline runs: adapters from each platform's request type to
//! `http::Request<Bytes>` and back.
//!
//! - [`vercel`]: the Vercel function protocol (`vercel_runtime`).
//! - [`lambda`]: AWS Lambda (`lambda_http`), chosen when `AWS_LAMBDA_RUNTIME_API` is set.
//! - [`local`]: the local server (`draftline serve`) and the tests: every
//!   function under `/api/<name>` on one port.
//!
//! [`run_function`] is the whole `main` of a deployed function, and
//! [`run_tool`] of a tool's function.

pub mod lambda;
pub mod local;
pub mod vercel;

use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};

use crate::config::{Config, ConfigError};
use crate::observe;
use crate::pages::Pages;
use crate::pipeline::App;
use draftline_contract::clock::SystemClock;
use draftline_contract::tool::Registry;
use draftline_dynamo::Db;

/// What a deployed function serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// One tool: `POST` its input, whatever the path.
    Tool(&'static str),
    /// The RFC 9728 metadata document.
    ProtectedResourceMetadata,
    /// The stateless MCP endpoint.
    Mcp,
    /// The caller's tool list (`GET /api/tools?format=`).
    Tools,
    /// The app's [`Pages`] (the review pages), under their prefix.
    Pages,
}

/// Serves one request to `function`.
pub async fn serve(app: &App, function: Function, request: Request<Bytes>) -> Response<Bytes> {
    match function {
        Function::Tool(name) => app.handle_tool(name, request).await,
        Function::ProtectedResourceMetadata => local::metadata_response(app, &request),
        Function::Mcp => crate::mcp::handle(app, request).await,
        Function::Tools => crate::listing::handle(app, request).await,
        Function::Pages => match app.pages() {
            Some(pages) => pages.handle(app, request).await,
            None => crate::response::json(
                http::StatusCode::NOT_FOUND,
                &serde_json::json!({"ok": false, "error": {"code": "NOT_FOUND", "message": "This function serves no pages.", "retryable": false}}),
                &crate::edge::request_id(request.headers()),
            ),
        },
    }
}

/// What a deployed function does with each request. The platform adapters
/// are generic over it, so a tool's function ([`ToolOnly`]) links the
/// pipeline of its tool and nothing of MCP, the listings or the pages.
pub trait Serve: Copy + Send + Sync + 'static {
    /// The tool the function serves, if it serves one.
    fn tool(self) -> Option<&'static str>;
    /// Serves one request.
    fn serve(self, app: &App, request: Request<Bytes>) -> impl Future<Output = Response<Bytes>> + Send;
}

impl Serve for Function {
    fn tool(self) -> Option<&'static str> {
        match self {
            Function::Tool(name) => Some(name),
            _ => None,
        }
    }

    fn serve(self, app: &App, request: Request<Bytes>) -> impl Future<Output = Response<Bytes>> + Send {
        serve(app, self, request)
    }
}

/// One tool's function: `POST` its input, whatever the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolOnly(pub &'static str);

impl Serve for ToolOnly {
    fn tool(self) -> Option<&'static str> {
        Some(self.0)
    }

    fn serve(self, app: &App, request: Request<Bytes>) -> impl Future<Output = Response<Bytes>> + Send {
        app.handle_tool(self.0, request)
    }
}

/// How a deployment builds its tools: from its settings (which ERP) and its
/// table. `draftline-erp-backends` provides the one every function uses.
pub type Catalogue = fn(&Config, &Db) -> Result<Registry, ConfigError>;

/// Runs a deployed function: reads the configuration (refusing to start
/// without it), builds the DynamoDB client and the tools once, and serves
/// requests through Lambda if `AWS_LAMBDA_RUNTIME_API` is set, else through
/// the Vercel runtime.
pub async fn run_function(catalogue: Catalogue, function: Function) -> ExitCode {
    start(function, |config, db| Ok((catalogue(config, db)?, None))).await
}

/// Runs the deployed function of tool `name`, as [`run_function`] with
/// `Function::Tool(name)` but linking nothing a tool does not serve;
/// `catalogue` should build that one tool.
pub async fn run_tool(catalogue: Catalogue, name: &'static str) -> ExitCode {
    start(ToolOnly(name), |config, db| Ok((catalogue(config, db)?, None))).await
}

/// Runs the deployed function of a [`Pages`] handler (`api/review.rs`):
/// as [`run_function`], with `build` making the tools and the pages once
/// per warm instance from the configuration (it refuses to start, naming
/// the setting, when the pages cannot work with it).
pub async fn run_pages<F>(build: F) -> ExitCode
where
    F: FnOnce(&Config, &Db) -> Result<(Registry, Arc<dyn Pages>), ConfigError>,
{
    start(Function::Pages, |config, db| {
        build(config, db).map(|(registry, pages)| (registry, Some(pages)))
    })
    .await
}

async fn start<S: Serve, F>(function: S, build: F) -> ExitCode
where
    F: FnOnce(&Config, &Db) -> Result<(Registry, Option<Arc<dyn Pages>>), ConfigError>,
{
    draftline_contract::crypto::install_crypto_provider();
    observe::init_json_logs();
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(err) => {
            eprintln!("draftline: refusing to start: {err}");
            tracing::error!(error = %err, "refusing to start");
            if let Some(api) = std::env::var_os("AWS_LAMBDA_RUNTIME_API") {
                lambda::report_init_error(&api.to_string_lossy(), &err.to_string()).await;
            }
            return ExitCode::FAILURE;
        }
    };
    let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
    let (registry, pages) = match build(&config, &db) {
        Ok(built) => built,
        Err(err) => {
            eprintln!("draftline: refusing to start: {err}");
            tracing::error!(error = %err, "refusing to start");
            if let Some(api) = std::env::var_os("AWS_LAMBDA_RUNTIME_API") {
                lambda::report_init_error(&api.to_string_lossy(), &err.to_string()).await;
            }
            return ExitCode::FAILURE;
        }
    };
    if let Some(name) = function.tool()
        && registry.get(name).is_none()
    {
        eprintln!("draftline: refusing to start: no tool named {name} in the catalogue");
        return ExitCode::FAILURE;
    }
    let mut app = App::with_parts(registry, config, db, Arc::new(SystemClock));
    if let Some(pages) = pages {
        app = app.with_pages(pages);
    }
    let app = Arc::new(app);
    let served = if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        lambda::run(app, function).await
    } else {
        vercel::run(app, function).await
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("draftline: the function runtime stopped: {err}");
            ExitCode::FAILURE
        }
    }
}
