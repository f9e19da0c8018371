//! `POST /api/mcp`: the stateless MCP endpoint; see `draftline_contract::mcp`.

use draftline_contract::runtime::{Function, run_function};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp::catalogue(), Function::Mcp).await
}
