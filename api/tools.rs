//! `GET /api/tools?format=ai-sdk|mcp|openai|openapi`: the caller's tool list.

use draftline_server::runtime::{ToolsFunction, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::definitions, ToolsFunction).await
}
