//! `POST /api/purchasing_search_vendors`: see `draftline_erp::tools::purchasing_search_vendors`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(
        draftline_erp_backends::catalogue,
        Function::Tool("purchasing_search_vendors"),
    )
    .await
}
