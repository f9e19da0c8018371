//! `POST /api/purchasing_create_po_draft`: see `draftline_erp::tools::purchasing_create_po_draft`.

use draftline_erp::tools::purchasing_create_po_draft::PurchasingCreatePoDraft;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    draftline_erp_backends::run_tool::<PurchasingCreatePoDraft>().await
}
