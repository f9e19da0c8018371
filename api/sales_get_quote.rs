//! `POST /api/sales_get_quote`: see `draftline_erp::tools::sales_get_quote`.

use draftline_erp::tools::sales_get_quote::SalesGetQuote;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<SalesGetQuote>().await
}
