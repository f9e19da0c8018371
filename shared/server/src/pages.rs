//! Pages for people, served next to the tools: the seam through which the
//! review pages (`draftline-review`) plug into every runtime without the
//! server depending on them.
//!
//! An [`App`] may carry one [`Pages`] handler ([`App::with_pages`]); the
//! local server routes every path under its [`prefix`](Pages::prefix) to
//! it, and a deployed function built with
//! [`run_pages`](crate::runtime::run_pages) serves only it.

use async_trait::async_trait;
use bytes::Bytes;
use http::Response;

use crate::edge::Admitted;
use crate::pipeline::App;

/// A handler of server-rendered pages under one path prefix.
#[async_trait]
pub trait Pages: Send + Sync + 'static {
    /// The path prefix it owns (`/review`): that path and everything below it.
    fn prefix(&self) -> &'static str;

    /// Serves one request as the edge admitted it (its id, the origin
    /// verdict to refuse on first). Never panics; anything a browser can
    /// send gets a page (or a redirect), never a 500 for bad input.
    async fn handle(&self, app: &App, request: Admitted) -> Response<Bytes>;
}

/// Whether `path` is `prefix` or below it.
pub fn owns(prefix: &str, path: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::owns;

    #[test]
    fn a_prefix_owns_itself_and_what_is_below_it_only() {
        assert!(owns("/review", "/review"));
        assert!(owns("/review", "/review/runs/x"));
        assert!(!owns("/review", "/reviewer"));
        assert!(!owns("/review", "/api/review"));
    }
}
