//! `POST /api/sales_search_customers`: see `draftline_erp::tools::sales_search_customers`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("sales_search_customers"),
    )
    .await
}
