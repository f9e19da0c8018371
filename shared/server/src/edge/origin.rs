//! Protection against DNS rebinding (Streamable HTTP, "Security"): a web
//! page on another site must not be able to drive the endpoint through a
//! user's browser.
//!
//! - A request with an `Origin` header is served only if that origin is this
//!   deployment's own (scheme, host and port of `DRAFTLINE_RESOURCE`), or, when
//!   the deployment itself is on a loopback address (`draftline serve`), any
//!   loopback origin (local tools such as the MCP Inspector). `Origin: null`
//!   and unreadable values are refused.
//! - When the deployment is on a loopback address, the `Host` (or HTTP/2
//!   authority) must be a loopback name too: a rebound `evil.example` name
//!   that resolves to 127.0.0.1 still arrives with `Host: evil.example`.
//!
//! Requests without `Origin` (every non-browser client) pass the first rule.
//! A refusal is HTTP 403, decided before anything else is read.

use draftline_contract::settings::url::{Origin, is_loopback_host, split_authority};
use http::HeaderMap;
use http::request::Parts;

/// Whether a request may reach the endpoint of the deployment at `resource`;
/// `Err` says why not (for the 403 body).
pub fn check(parts: &Parts, resource: &str) -> Result<(), String> {
    let own = Origin::parse(resource);
    let local = own.as_ref().is_some_and(Origin::is_loopback);
    let mut origins = parts.headers.get_all(http::header::ORIGIN).iter();
    if let Some(raw) = origins.next() {
        let text = raw.to_str().unwrap_or_default();
        let shown: String = text.chars().take(80).collect();
        if origins.next().is_some() {
            return Err("the Origin header was sent more than once".to_owned());
        }
        let allowed =
            Origin::parse(text).is_some_and(|origin| own.as_ref() == Some(&origin) || (local && origin.is_loopback()));
        if !allowed {
            return Err(format!("requests from origin '{shown}' are not accepted"));
        }
    }
    if local && let Some(host) = request_host(parts) {
        let allowed = split_authority(&host).is_some_and(|(host, _)| is_loopback_host(&host));
        if !allowed {
            let shown: String = host.chars().take(80).collect();
            return Err(format!(
                "this local server answers only loopback host names, not '{shown}'"
            ));
        }
    }
    Ok(())
}

/// Whether `origin` (an `Origin` header) is exactly the origin of
/// `resource`: scheme, host and port. Stricter than [`check`], which lets
/// any loopback origin reach a loopback deployment.
pub fn is_own_origin(origin: &str, resource: &str) -> bool {
    match (Origin::parse(origin), Origin::parse(resource)) {
        (Some(origin), Some(own)) => origin == own,
        _ => false,
    }
}

/// The authority the client addressed: the URI's (HTTP/2), else `Host`.
fn request_host(parts: &Parts) -> Option<String> {
    if let Some(authority) = parts.uri.authority() {
        return Some(authority.as_str().to_owned());
    }
    host_header(&parts.headers)
}

fn host_header(headers: &HeaderMap) -> Option<String> {
    headers
        .get(http::header::HOST)
        .map(|value| value.to_str().unwrap_or("(unreadable)").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Request;

    fn parts(origin: Option<&str>, host: Option<&str>) -> Parts {
        let mut builder = Request::post("/api/mcp");
        if let Some(origin) = origin {
            builder = builder.header("origin", origin);
        }
        if let Some(host) = host {
            builder = builder.header("host", host);
        }
        builder.body(()).unwrap().into_parts().0
    }

    const LOCAL: &str = "http://127.0.0.1:3000";
    const DEPLOYED: &str = "https://erp-tools.example.com";

    #[test]
    fn requests_without_an_origin_pass() {
        assert!(check(&parts(None, None), DEPLOYED).is_ok());
        assert!(check(&parts(None, Some("127.0.0.1:3000")), LOCAL).is_ok());
    }

    #[test]
    fn the_deployments_own_origin_passes_and_others_do_not() {
        assert!(check(&parts(Some("https://erp-tools.example.com"), None), DEPLOYED).is_ok());
        assert!(check(&parts(Some("https://ERP-tools.example.com:443"), None), DEPLOYED).is_ok());
        assert!(check(&parts(Some("http://erp-tools.example.com"), None), DEPLOYED).is_err());
        assert!(check(&parts(Some("https://evil.example.com"), None), DEPLOYED).is_err());
        assert!(check(&parts(Some("https://erp-tools.example.com.evil.com"), None), DEPLOYED).is_err());
        assert!(check(&parts(Some("null"), None), DEPLOYED).is_err());
        assert!(check(&parts(Some("http://localhost:6274"), None), DEPLOYED).is_err());
    }

    #[test]
    fn a_local_server_accepts_loopback_origins_and_hosts_only() {
        for origin in [
            "http://localhost:6274",
            "http://127.0.0.1:9999",
            "http://[::1]:80",
            LOCAL,
        ] {
            assert!(
                check(&parts(Some(origin), Some("127.0.0.1:3000")), LOCAL).is_ok(),
                "{origin}"
            );
        }
        assert!(check(&parts(Some("http://evil.example.com"), Some("127.0.0.1:3000")), LOCAL).is_err());
        // A rebound name reaches the loopback server with its own Host.
        assert!(check(&parts(None, Some("evil.example.com")), LOCAL).is_err());
        assert!(check(&parts(None, Some("evil.example.com:3000")), LOCAL).is_err());
        assert!(check(&parts(None, Some("localhost:3000")), LOCAL).is_ok());
        assert!(check(&parts(None, Some("[::1]:3000")), LOCAL).is_ok());
    }
}
