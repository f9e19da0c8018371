//! `POST /api/agent_get_limits`: see `draftline_erp::tools::agent_get_limits`.

use draftline_erp::tools::agent_get_limits::AgentGetLimits;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<AgentGetLimits>().await
}
