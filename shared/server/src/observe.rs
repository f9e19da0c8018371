//! Logging: JSON lines in functions (one per call, see the pipeline), plain
//! text for the local server. Never a token or an argument payload.

use tracing_subscriber::EnvFilter;

fn filter() -> EnvFilter {
    EnvFilter::try_from_env("DRAFTLINE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,aws_smithy_runtime=warn,aws_config=warn,hyper=warn"))
}

/// JSON log lines on stdout (deployed functions). Safe to call twice.
pub fn init_json_logs() {
    let _ = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_env_filter(filter())
        .with_writer(std::io::stdout)
        .try_init();
}

/// Human-readable log lines on stderr (the local server). Safe to call twice.
pub fn init_text_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .try_init();
}
