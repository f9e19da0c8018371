//! The REST client: one [`draftline_http::Client`] per backend instance, every
//! request counted, bearer key and company context on each, answers bounded
//! in size, and every failure classified once into the contract's errors
//! (REST.md, "Conventions" and "Errors").
//!
//! | what happened | a read | a create |
//! | --- | --- | --- |
//! | nothing reached Tryton (refused, DNS, connect timeout) | `erp_unreadable` | `erp_unavailable(_, false, 2)` |
//! | sent, no complete answer (timeout, connection lost), 502/504/… | `erp_unreadable` | `erp_unavailable(_, true, 2)` |
//! | 503 (database busy, nothing written) | `erp_unreadable` | `erp_unavailable(_, false, 1)` |
//! | 401/403 (key), 404 (database), other 4xx, 500 (a Python error, rolled back) | `internal` | `internal` |
//! | 200 with a body we cannot read | `internal` | `erp_unavailable(_, true, 2)`: it was created |
//!
//! A create answered 200 whose record lacks what was asked for, and a
//! create refused because the key is taken whose document cannot then be
//! read, are `erp_unavailable(_, true, 2)` too (`drafts.rs`): Tryton holds
//! a document for the key, and the next attempt finds it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use draftline_contract::ErpError;
use draftline_http::trace;
use http::StatusCode;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value, json};

use crate::settings::{SettingsError, TrytonKey, TrytonSettings};
use crate::value::Record;

/// The largest answer read (a search of every order of a branch with its
/// lines is a few hundred KiB).
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// The company every request runs in (MAPPING.md: the tenant's one company).
const COMPANY: i64 = 1;

/// A search: `GET /model/<model>?d=…&f=…&o=…&s=…`.
#[derive(Debug, Clone)]
pub struct Search {
    model: &'static str,
    domain: Value,
    fields: Vec<&'static str>,
    order: Option<Value>,
    limit: Option<usize>,
    context: Map<String, Value>,
}

impl Search {
    /// Records of `model` matching `domain`, with `fields` (dotted paths allowed).
    pub fn new(model: &'static str, domain: Value, fields: &[&'static str]) -> Self {
        Self {
            model,
            domain,
            fields: fields.to_vec(),
            order: None,
            limit: None,
            context: Map::new(),
        }
    }

    /// Ordered by `field` ascending or descending.
    pub fn order(mut self, field: &str, ascending: bool) -> Self {
        self.order = Some(json!([[field, if ascending { "ASC" } else { "DESC" }]]));
        self
    }

    /// Ordered by each `(field, ascending)` in turn.
    pub fn order_by(mut self, fields: &[(&str, bool)]) -> Self {
        let order: Vec<Value> = fields
            .iter()
            .map(|(field, ascending)| json!([field, if *ascending { "ASC" } else { "DESC" }]))
            .collect();
        self.order = Some(Value::Array(order));
        self
    }

    /// At most `limit` records.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// With `key: value` added to the company context.
    pub fn context(mut self, key: &str, value: Value) -> Self {
        self.context.insert(key.to_owned(), value);
        self
    }
}

/// How a request failed, before it is told as a [`ErpError`].
#[derive(Debug)]
pub enum Failure {
    /// Nothing reached Tryton.
    Unreachable(draftline_http::Error),
    /// The request may have reached Tryton, but no complete answer came back.
    NoAnswer(draftline_http::Error),
    /// Tryton answered with another status than 200; `message` is its text.
    Status {
        /// The HTTP status.
        status: StatusCode,
        /// Tryton's message (`message` of a JSON error, or the HTML page's text).
        message: String,
    },
    /// A 200 whose body is too large or not the JSON expected.
    BadBody(String),
}

impl Failure {
    /// Whether Tryton refused a create because the draftline key is taken.
    pub fn is_taken_key(&self) -> bool {
        matches!(self, Self::Status { status, message }
            if *status == StatusCode::BAD_REQUEST && message.contains("draftline key already exists"))
    }

    fn cause(&self, what: &str) -> String {
        match self {
            Self::Unreachable(e) => format!("{what}: Tryton unreachable: {e}"),
            Self::NoAnswer(e) => format!("{what}: no complete answer from Tryton: {e}"),
            Self::Status { status, message } => format!("{what}: Tryton answered {status}: {message}"),
            Self::BadBody(reason) => format!("{what}: {reason}"),
        }
    }

    /// The error of a failed read (`what` names it for the log).
    pub fn for_read(self, what: &str) -> ErpError {
        let cause = self.cause(what);
        match self {
            Self::Unreachable(_) | Self::NoAnswer(_) => ErpError::Unreadable(cause.into()),
            Self::Status { status, .. } if status.is_server_error() && status != StatusCode::INTERNAL_SERVER_ERROR => {
                ErpError::Unreadable(cause.into())
            }
            Self::Status { .. } | Self::BadBody(_) => ErpError::internal(cause),
        }
    }

    /// The error of a failed create (`what` names it for the log).
    pub fn for_create(self, what: &str) -> ErpError {
        let cause = self.cause(what);
        let failed = |may_have_written, retry_after_seconds| ErpError::WriteFailed {
            cause: cause.clone().into(),
            may_have_written,
            retry_after_seconds,
        };
        match self {
            Self::Unreachable(_) => failed(false, 2),
            Self::NoAnswer(_) => failed(true, 2),
            Self::Status { status, .. } if status == StatusCode::SERVICE_UNAVAILABLE => failed(false, 1),
            Self::Status { status, .. } if status.is_server_error() && status != StatusCode::INTERNAL_SERVER_ERROR => {
                failed(true, 2)
            }
            Self::Status { .. } => ErpError::internal(cause),
            // Tryton said 200: the document exists, and the next call finds it by its key.
            Self::BadBody(_) => failed(true, 2),
        }
    }
}

/// One Tryton database's REST API.
pub struct Rest {
    http: draftline_http::Client,
    /// `<url>/<database>/rest/model/`, checked by the settings.
    base: http::Uri,
    limits: draftline_http::Limits,
    database: String,
    key: TrytonKey,
    requests: AtomicU64,
    /// The slots of [`TrytonSettings::max_in_flight`], handed out in order.
    in_flight: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Rest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rest")
            .field("base", &self.base)
            .field("key", &self.key)
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

fn b64(value: &Value) -> String {
    URL_SAFE.encode(value.to_string())
}

impl Rest {
    /// The client of `settings` (no request is made).
    pub fn new(settings: &TrytonSettings) -> Result<Self, SettingsError> {
        let base = settings.model_base()?;
        Ok(Self {
            http: draftline_http::Client::new(settings.connect_timeout),
            base,
            limits: draftline_http::Limits {
                timeout: Some(settings.request_timeout),
                max_body: MAX_BODY,
            },
            database: settings.database.clone(),
            key: settings.key.clone(),
            requests: AtomicU64::new(0),
            in_flight: tokio::sync::Semaphore::new(settings.max_in_flight.max(1)),
        })
    }

    /// Every HTTP request sent so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// The database.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The base of the model paths (`<url>/<database>/rest/model/`).
    pub fn base(&self) -> &http::Uri {
        &self.base
    }

    /// A request to `model` (a model name, or `model/<id>`) with `query`,
    /// carrying the key and the company `context`.
    fn request(
        &self,
        method: http::Method,
        model: &str,
        query: &[(&str, &str)],
        context: &Map<String, Value>,
    ) -> http::request::Builder {
        let mut target = format!("{}{model}", self.base);
        if !query.is_empty() {
            let mut pairs = form_urlencoded::Serializer::new(String::new());
            pairs.extend_pairs(query);
            target.push('?');
            target.push_str(&pairs.finish());
        }
        let mut full = Map::new();
        full.insert("company".to_owned(), json!(COMPANY));
        full.extend(context.iter().map(|(k, v)| (k.clone(), v.clone())));
        let request = http::Request::builder()
            .method(method)
            .uri(target)
            .header("X-Tryton-Context", b64(&Value::Object(full)));
        match HeaderValue::from_str(&format!("Bearer {}", self.key.expose())) {
            Ok(mut value) => {
                value.set_sensitive(true);
                request.header(AUTHORIZATION, value)
            }
            // A key with control characters cannot be sent; Tryton answers 401.
            Err(_) => request,
        }
    }

    /// Sends `request`, counted, and reads its answer (at most [`MAX_BODY`]).
    async fn send(&self, model: &str, request: http::request::Builder, body: bytes::Bytes) -> Result<Value, Failure> {
        let mut request = request
            .body(body)
            .map_err(|e| Failure::BadBody(format!("request to {model}: {e}")))?;
        let method = request.method().clone();
        // The call's trace goes on to Tryton: this request is a span of it.
        let span = trace::outgoing().map(|(span_id, traceparent, tracestate)| {
            let headers = request.headers_mut();
            if let Ok(value) = HeaderValue::from_str(&traceparent) {
                headers.insert("traceparent", value);
            }
            if let Some(value) = tracestate.and_then(|state| HeaderValue::from_str(&state).ok()) {
                headers.insert("tracestate", value);
            }
            span_id
        });
        let queued = Instant::now();
        // The semaphore is never closed; without a slot the request is sent
        // all the same rather than failed.
        let _slot = self.in_flight.acquire().await.ok();
        let queued_ms = u64::try_from(queued.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.requests.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = async {
            let response = self.http.send(request, self.limits).await.map_err(|e| match e.kind() {
                draftline_http::ErrorKind::NotSent
                | draftline_http::ErrorKind::Connect
                | draftline_http::ErrorKind::Refused => Failure::Unreachable(e),
                draftline_http::ErrorKind::TooLarge => {
                    Failure::BadBody(format!("Tryton's answer is larger than {MAX_BODY} bytes"))
                }
                draftline_http::ErrorKind::Timeout | draftline_http::ErrorKind::Lost => Failure::NoAnswer(e),
            })?;
            let status = response.status();
            let body = response.into_body();
            if status != StatusCode::OK {
                return Err(Failure::Status {
                    status,
                    message: error_text(&body),
                });
            }
            serde_json::from_slice(&body).map_err(|e| Failure::BadBody(format!("{method} {model}: not JSON: {e}")))
        }
        .await;
        if let Some(span_id) = span {
            let answered = !matches!(result, Err(Failure::Unreachable(_) | Failure::NoAnswer(_)));
            let operation = format!("{method} {}", model.split('/').next().unwrap_or(model));
            trace::record_request("tryton", &operation, span_id, started, answered);
        }
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &result {
            Ok(_) => {
                tracing::debug!(database = %self.database, %method, model, queued_ms, elapsed_ms, "tryton request")
            }
            Err(failure) => tracing::debug!(
                database = %self.database, %method, model, queued_ms, elapsed_ms, failure = %failure.cause("request"),
                "tryton request failed"
            ),
        }
        result
    }

    /// The records `search` finds, for a read of `what` (named in its error).
    pub async fn read(&self, search: &Search, what: &str) -> Result<Vec<Record>, ErpError> {
        self.search(search).await.map_err(|f| f.for_read(what))
    }

    /// The records of a search.
    pub async fn search(&self, search: &Search) -> Result<Vec<Record>, Failure> {
        let domain = b64(&search.domain);
        let order = search.order.as_ref().map(b64);
        let limit = search.limit.map(|limit| limit.to_string());
        let mut query: Vec<(&str, &str)> = vec![("d", &domain)];
        query.extend(search.fields.iter().map(|field| ("f", *field)));
        if let Some(order) = &order {
            query.push(("o", order));
        }
        if let Some(limit) = &limit {
            query.push(("s", limit));
        }
        let request = self.request(http::Method::GET, search.model, &query, &search.context);
        match self.send(search.model, request, bytes::Bytes::new()).await? {
            Value::Array(items) => items
                .into_iter()
                .map(|item| Record::new(search.model, item))
                .collect::<Result<_, _>>()
                .map_err(|e| Failure::BadBody(e.to_string())),
            other => Err(Failure::BadBody(format!(
                "GET {}: not a list: {}",
                search.model,
                other.to_string().chars().take(80).collect::<String>()
            ))),
        }
    }

    /// Creates one record of `model` from `body` and reads `fields` of it.
    pub async fn create(&self, model: &'static str, body: &Value, fields: &[&str]) -> Result<Record, Failure> {
        let query: Vec<(&str, &str)> = fields.iter().map(|field| ("f", *field)).collect();
        let request = self
            .request(http::Method::POST, model, &query, &Map::new())
            .header(CONTENT_TYPE, "application/json");
        let answer = self.send(model, request, bytes::Bytes::from(body.to_string())).await?;
        Record::new(model, answer).map_err(|e| Failure::BadBody(e.to_string()))
    }
}

/// Tryton's text of an error answer: `message` of a JSON error, else the
/// `<p>` of werkzeug's HTML page, else its `<title>`; at most 300 characters.
pub fn error_text(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text)
        && let Some(message) = map.get("message").and_then(Value::as_str)
    {
        return message.chars().take(300).collect();
    }
    let between = |open: &str, close: &str| {
        let start = text.find(open)?.checked_add(open.len())?;
        let end = text.get(start..)?.find(close)?.checked_add(start)?;
        text.get(start..end).map(str::to_owned)
    };
    let raw = between("<p>", "</p>")
        .or_else(|| between("<title>", "</title>"))
        .unwrap_or_default();
    raw.replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .chars()
        .take(300)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> Failure {
        Failure::Status {
            status: StatusCode::from_u16(code).unwrap(),
            message: message.to_owned(),
        }
    }

    /// What the tools tell a model for `err`.
    fn kind(err: ErpError) -> (&'static str, bool, Option<u64>) {
        let told = draftline_contract::ToolError::from(err);
        (
            told.code().as_str(),
            told.may_have_written(),
            told.retry_after_seconds(),
        )
    }

    #[test]
    fn every_answer_of_a_read_is_told_as_the_contract_says() {
        assert_eq!(
            kind(status(503, "busy").for_read("x")),
            ("DEPENDENCY_UNAVAILABLE", false, Some(2))
        );
        assert_eq!(
            kind(status(502, "").for_read("x")),
            ("DEPENDENCY_UNAVAILABLE", false, Some(2))
        );
        for code in [400, 401, 403, 404, 416, 500] {
            assert_eq!(
                kind(status(code, "").for_read("x")),
                ("INTERNAL_ERROR", false, None),
                "{code}"
            );
        }
        assert_eq!(kind(Failure::BadBody("x".into()).for_read("x")).0, "INTERNAL_ERROR");
    }

    #[test]
    fn every_answer_of_a_create_says_whether_the_draft_may_exist() {
        assert_eq!(
            kind(status(503, "busy").for_create("x")),
            ("DEPENDENCY_UNAVAILABLE", false, Some(1))
        );
        assert_eq!(
            kind(status(504, "").for_create("x")),
            ("DEPENDENCY_UNAVAILABLE", true, Some(2))
        );
        for code in [400, 401, 403, 404, 500] {
            assert_eq!(
                kind(status(code, "").for_create("x")),
                ("INTERNAL_ERROR", false, None),
                "{code}"
            );
        }
        assert_eq!(
            kind(Failure::BadBody("x".into()).for_create("x")),
            ("DEPENDENCY_UNAVAILABLE", true, Some(2))
        );
        let taken = status(400, "A document with this draftline key already exists in the company.");
        assert!(taken.is_taken_key());
        assert!(!status(400, "A draftline draft needs a warehouse (its branch).").is_taken_key());
        assert!(!status(500, "draftline key already exists").is_taken_key());
    }

    #[test]
    fn error_texts_come_from_json_or_the_html_page() {
        assert_eq!(
            error_text(br#"{"status": 400, "message": "A draftline draft needs a warehouse.", "description": ""}"#),
            "A draftline draft needs a warehouse."
        );
        assert_eq!(
            error_text(b"<!doctype html>\n<title>500 Internal Server Error</title>\n<h1>x</h1>\n<p>Missing setter function for field &#34;Quotation Expire&#34;.</p>"),
            "Missing setter function for field \"Quotation Expire\"."
        );
        assert_eq!(error_text(b"<title>401 Unauthorized</title>"), "401 Unauthorized");
        assert_eq!(error_text(b""), "");
    }

    #[test]
    fn the_context_is_base64url_with_padding() {
        assert_eq!(b64(&json!({"company": 1})), "eyJjb21wYW55IjoxfQ==");
    }
}
