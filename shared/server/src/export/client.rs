//! The exporter's HTTP client: draftline's own ([`draftline_http::Client`]),
//! so no second HTTP stack (reqwest) is linked into the functions.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// The largest collector answer read (an `ExportTraceServiceResponse` is
/// a few bytes; a partial-success message a few hundred).
const MAX_ANSWER: usize = 64 * 1024;

/// [`draftline_http::Client`] as OpenTelemetry's [`HttpClient`], each
/// request bounded by the flush timeout.
#[derive(Debug, Clone)]
pub(super) struct CollectorClient {
    client: draftline_http::Client,
    timeout: Duration,
}

impl CollectorClient {
    pub(super) fn new(timeout: Duration) -> Self {
        Self {
            client: draftline_http::Client::new(timeout),
            timeout,
        }
    }
}

#[async_trait]
impl HttpClient for CollectorClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let limits = draftline_http::Limits {
            timeout: Some(self.timeout),
            max_body: MAX_ANSWER,
        };
        Ok(self.client.send(request, limits).await?)
    }
}
