//! `POST /api/sales_get_customer_summary`: see `draftline_erp::tools::sales_get_customer_summary`.

use draftline_erp::tools::sales_get_customer_summary::SalesGetCustomerSummary;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<SalesGetCustomerSummary>().await
}
