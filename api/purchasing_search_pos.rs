//! `POST /api/purchasing_search_pos`: see `draftline_erp::tools::purchasing_search_pos`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("purchasing_search_pos"),
    )
    .await
}
