//! `GET /.well-known/oauth-protected-resource` (RFC 9728), rewritten here by `vercel.json`.

use draftline_server::runtime::{Function, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(draftline_erp_backends::catalogue, Function::ProtectedResourceMetadata).await
}
