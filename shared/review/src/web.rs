//! The HTTP side of a page: reading forms, queries and cookies, and the
//! responses every page answers with (HTML with a strict
//! Content-Security-Policy, redirects, the stylesheet).

use std::collections::HashMap;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Response, StatusCode};

/// The Content-Security-Policy of every page: nothing but this origin's
/// stylesheet and forms; no scripts at all, no frames, no other origin.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The most a form field or query value may hold, in bytes.
pub const MAX_FIELD_BYTES: usize = 2048;

/// The fields of an `application/x-www-form-urlencoded` body or a query
/// string; the first value of a repeated name wins, values are bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(HashMap<String, String>);

impl Fields {
    /// Parses `input` (a query string or a form body).
    pub fn parse(input: &[u8]) -> Self {
        let mut fields = HashMap::new();
        for (name, value) in form_urlencoded::parse(input) {
            if name.len() <= 64 && value.len() <= MAX_FIELD_BYTES {
                fields.entry(name.into_owned()).or_insert_with(|| value.into_owned());
            }
        }
        Self(fields)
    }

    /// The query string of `uri`.
    pub fn of_query(uri: &http::Uri) -> Self {
        Self::parse(uri.query().unwrap_or_default().as_bytes())
    }

    /// The value of `name`, trimmed; `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim())
}

/// Percent-encodes `value` for a query string.
pub fn encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn secure_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// An HTML page.
pub fn html(status: StatusCode, body: String) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure_headers(headers);
    response
}

/// `303 See Other` to `location` (a path of this deployment).
pub fn see_other(location: &str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::SEE_OTHER;
    let headers = response.headers_mut();
    secure_headers(headers);
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, value);
    }
    response
}

/// `302 Found` to `location`, another site (the identity provider).
pub fn found(location: &str) -> Response<Bytes> {
    let mut response = see_other(location);
    *response.status_mut() = StatusCode::FOUND;
    response
}

/// Adds a `Set-Cookie` header.
pub fn set_cookie(response: &mut Response<Bytes>, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// The stylesheet, cached by browsers for an hour.
pub fn stylesheet() -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(include_bytes!("review.css")));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}

/// A path to send a person back to after sign-in: only a path of the
/// review pages (never another site, never `//host`).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if draftline_server::pages::owns(crate::PREFIX, path.split(['?', '#']).next().unwrap_or_default())
                && !path.contains("//")
                && !path.contains('\\')
                && path.bytes().all(|b| (0x21..0x7f).contains(&b)) =>
        {
            path.to_owned()
        }
        _ => crate::PREFIX.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_the_review_pages_are_followed_after_sign_in() {
        assert_eq!(safe_next(Some("/review/runs/r1?cursor=x")), "/review/runs/r1?cursor=x");
        for bad in [
            "https://evil.example/",
            "//evil.example",
            "/review//evil",
            "/api/mcp",
            "/review\\x",
            "/reviewer",
        ] {
            assert_eq!(safe_next(Some(bad)), "/review", "{bad}");
        }
        assert_eq!(safe_next(None), "/review");
    }

    #[test]
    fn fields_are_bounded_and_the_first_value_wins() {
        let fields = Fields::parse(b"a=1&a=2&b=%3Cscript%3E&c=&long=");
        assert_eq!(fields.get("a"), Some("1"));
        assert_eq!(fields.get("b"), Some("<script>"));
        assert_eq!(fields.get("c"), None);
        let huge = format!("x={}", "y".repeat(MAX_FIELD_BYTES + 1));
        assert_eq!(Fields::parse(huge.as_bytes()).get("x"), None);
    }

    #[test]
    fn a_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, "a=1; draftline_session=v1.x.y".parse().unwrap());
        headers.append(header::COOKIE, "b=2".parse().unwrap());
        assert_eq!(cookie(&headers, "draftline_session"), Some("v1.x.y"));
        assert_eq!(cookie(&headers, "b"), Some("2"));
        assert_eq!(cookie(&headers, "c"), None);
    }
}
