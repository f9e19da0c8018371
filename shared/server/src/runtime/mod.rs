//! Where the pipeline runs: adapters from each platform's request type to
//! `http::Request<Bytes>` and back.
//!
//! - [`vercel`]: the Vercel function protocol (`vercel_runtime`).
//! - [`lambda`]: AWS Lambda (`lambda_http`), chosen when `AWS_LAMBDA_RUNTIME_API` is set.
//! - [`local`]: the local server (`draftline serve`) and the tests: every
//!   function under `/api/<name>` on one port.
//!
//! [`run_function`] is the whole `main` of a deployed function.

pub mod lambda;
pub mod local;
pub mod notify;
pub mod vercel;

use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use http::Response;

use crate::config::{Config, ConfigError, Source};
use crate::edge::Admitted;
use crate::observe;
use crate::pages::Pages;
use crate::pipeline::App;
use draftline_contract::clock::SystemClock;
use draftline_contract::tool::Registry;
use draftline_dynamo::Db;

async fn serve_pages(app: &App, request: Admitted) -> Response<Bytes> {
    match app.pages() {
        Some(pages) => pages.handle(app, request).await,
        None => crate::response::json(
            http::StatusCode::NOT_FOUND,
            &serde_json::json!({"ok": false, "error": {"code": "NOT_FOUND", "message": "This function serves no pages.", "retryable": false}}),
            request.request_id(),
        ),
    }
}

/// What a deployed function does with each request: [`ToolFunction`],
/// [`McpFunction`], [`ToolsFunction`], [`MetadataFunction`] or
/// [`PagesFunction`]. The platform adapters are generic over it, so each
/// function's binary links its own path and nothing else (a tool's, the
/// pipeline of its tool and nothing of MCP, the listings or the pages).
pub trait Serve: Copy + Send + Sync + 'static {
    /// The tool the function serves, if it serves one.
    fn tool(self) -> Option<&'static str>;
    /// Serves one request, as the edge admitted it.
    fn serve(self, app: &App, request: Admitted) -> impl Future<Output = Response<Bytes>> + Send;
}

/// One tool's function: `POST` its input, whatever the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolFunction(pub &'static str);

impl Serve for ToolFunction {
    fn tool(self) -> Option<&'static str> {
        Some(self.0)
    }

    fn serve(self, app: &App, request: Admitted) -> impl Future<Output = Response<Bytes>> + Send {
        app.handle_tool(self.0, request)
    }
}

/// Declares a [`Serve`] that serves one path other than a tool, so its
/// binary links that one path.
macro_rules! serves {
    ($(#[$doc:meta] $name:ident, |$app:ident, $request:ident| $body:expr;)*) => {
        $(
            #[$doc]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $name;

            impl Serve for $name {
                fn tool(self) -> Option<&'static str> {
                    None
                }

                #[allow(clippy::manual_async_fn)]
                fn serve(self, $app: &App, $request: Admitted) -> impl Future<Output = Response<Bytes>> + Send {
                    async move { $body }
                }
            }
        )*
    };
}

serves! {
    /// The function of the RFC 9728 metadata document.
    MetadataFunction, |app, request| local::metadata_response(app, &request);
    /// The function of the stateless MCP endpoint.
    McpFunction, |app, request| crate::mcp::handle(app, request).await;
    /// The function of the tool lists.
    ToolsFunction, |app, request| crate::listing::handle(app, request).await;
    /// The function of the app's pages.
    PagesFunction, |app, request| serve_pages(app, request).await;
}

/// The catalogue of a function that serves no tool (the metadata document).
pub fn no_tools(_: &Source, _: &Config, _: &Db) -> Result<Registry, ConfigError> {
    Ok(Registry::new())
}

/// How a deployment builds its tools: from the settings' source (the ERP
/// backend parses its own settings from it), the server's configuration
/// and the table. `draftline-erp-backends` provides the one every function uses.
pub type Catalogue = fn(&Source, &Config, &Db) -> Result<Registry, ConfigError>;

/// Runs a deployed function: reads the configuration (refusing to start
/// without it), builds the DynamoDB client and the tools once, and serves
/// requests through Lambda if `AWS_LAMBDA_RUNTIME_API` is set, else through
/// the Vercel runtime.
pub async fn run_function(catalogue: Catalogue, function: impl Serve) -> ExitCode {
    start(function, |source, config, db| {
        Ok((catalogue(source, config, db)?, None))
    })
    .await
}

/// Runs the deployed function of a [`Pages`] handler (`api/review.rs`):
/// as [`run_function`], with `build` making the tools and the pages once
/// per warm instance from the settings' source and the configuration (the
/// pages parse their own settings from the source, and it refuses to start,
/// naming the setting, when the pages cannot work with them).
pub async fn run_pages<F>(build: F) -> ExitCode
where
    F: FnOnce(&Source, &Config, &Db) -> Result<(Registry, Arc<dyn Pages>), ConfigError>,
{
    start(PagesFunction, |source, config, db| {
        build(source, config, db).map(|(registry, pages)| (registry, Some(pages)))
    })
    .await
}

/// Says why the function does not start, on stderr, in the log and (under
/// Lambda) to the runtime API.
pub(crate) async fn refuse_to_start(err: &ConfigError) -> ExitCode {
    eprintln!("draftline: refusing to start: {err}");
    tracing::error!(error = %err, "refusing to start");
    if let Some(api) = std::env::var_os("AWS_LAMBDA_RUNTIME_API") {
        lambda::report_init_error(&api.to_string_lossy(), &err.to_string()).await;
    }
    ExitCode::FAILURE
}

async fn start<S: Serve, F>(function: S, build: F) -> ExitCode
where
    F: FnOnce(&Source, &Config, &Db) -> Result<(Registry, Option<Arc<dyn Pages>>), ConfigError>,
{
    draftline_contract::crypto::install_crypto_provider();
    observe::init_json_logs();
    let source = Source::env();
    let config = match Config::from_source(&source) {
        Ok(config) => config,
        Err(err) => return refuse_to_start(&err).await,
    };
    let db = Db::connect(&config.table, config.dynamodb_endpoint.as_deref()).await;
    let (registry, pages) = match build(&source, &config, &db) {
        Ok(built) => built,
        Err(err) => return refuse_to_start(&err).await,
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
