//! `POST /api/sales_search_customers`: see `draftline_erp::tools::sales_search_customers`.

use draftline_erp::tools::sales_search_customers::SalesSearchCustomers;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<SalesSearchCustomers>().await
}
