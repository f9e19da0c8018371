//! `POST /api/purchasing_search_pos`: see `draftline_erp::tools::purchasing_search_pos`.

use draftline_erp::tools::purchasing_search_pos::PurchasingSearchPos;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<PurchasingSearchPos>().await
}
