//! `POST /api/sales_create_quote_draft`: see `draftline_erp::tools::sales_create_quote_draft`.

use draftline_erp::tools::sales_create_quote_draft::SalesCreateQuoteDraft;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<SalesCreateQuoteDraft>().await
}
