//! `GET /.well-known/oauth-protected-resource` (RFC 9728), rewritten here by `vercel.json`.

use draftline_server::runtime::{MetadataFunction, no_tools, run_function};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    run_function(no_tools, MetadataFunction).await
}
