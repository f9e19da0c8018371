//! `POST /api/purchasing_create_po_draft`: see `draftline_erp::tools::purchasing_create_po_draft`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("purchasing_create_po_draft"),
    )
    .await
}
