//! `POST /api/finance_get_account_summary`: see `draftline_erp::tools::finance_get_account_summary`.

use draftline_erp::tools::finance_get_account_summary::FinanceGetAccountSummary;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<FinanceGetAccountSummary>().await
}
