//! `POST /api/finance_list_tax_types`: see `draftline_erp::tools::finance_list_tax_types`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("finance_list_tax_types"),
    )
    .await
}
