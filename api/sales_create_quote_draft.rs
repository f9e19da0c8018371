//! `POST /api/sales_create_quote_draft`: see `draftline_erp::tools::sales_create_quote_draft`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("sales_create_quote_draft"),
    )
    .await
}
