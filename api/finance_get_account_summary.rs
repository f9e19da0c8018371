//! `POST /api/finance_get_account_summary`: see `draftline_erp::tools::finance_get_account_summary`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("finance_get_account_summary"),
    )
    .await
}
