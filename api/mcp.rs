//! `POST /api/mcp`: the stateless MCP endpoint; see `draftline_server::mcp`.

use draftline_server::runtime::{McpFunction, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::catalogue, McpFunction).await
}
