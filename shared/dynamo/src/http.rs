//! The SDK's HTTP transport: draftline's one HTTP client
//! ([`draftline_http`]: hyper's pooled HTTP/1.1 client over rustls with the
//! process's one crypto provider), in place of the SDK's default client.
//! DynamoDB speaks HTTP/1.1 and JSON; the SDK's default client also links
//! an HTTP/2 client (`h2`), its own hyper client and TLS set-up into every
//! function, and none of it is needed. (`reqwest`
//! itself was measured here first: its per-request URL parsing and header
//! copies cost 5–15 % more CPU per call than this.) The SDK still does
//! everything above the transport: signing, retries, timeouts, endpoint,
//! (de)serialisation.
//!
//! Failures are told to the SDK as it tells its own: a timeout is a
//! timeout, a refused or broken connection is I/O (both transient: the
//! SDK's retry policy applies, and [`crate::classify`] says unavailable).

use std::sync::Mutex;
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use draftline_http::trace;

/// When the SDK asks for none (the DynamoDB client's own is set in `Db::connect`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The connect and read timeouts a connector was built for.
type Timeouts = (Option<Duration>, Option<Duration>);

/// One connector per distinct pair of timeouts the SDK asks for (the
/// DynamoDB client asks for one; credential providers may ask for another).
#[derive(Debug, Default)]
struct Transport {
    connectors: Mutex<Vec<(Timeouts, SharedHttpConnector)>>,
}

/// The HTTP client to give the SDK (DynamoDB and the credential providers).
pub(crate) fn client() -> SharedHttpClient {
    SharedHttpClient::new(Transport::default())
}

impl HttpClient for Transport {
    fn http_connector(&self, settings: &HttpConnectorSettings, _components: &RuntimeComponents) -> SharedHttpConnector {
        let key = (settings.connect_timeout(), settings.read_timeout());
        let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, connector)) = connectors.iter().find(|(timeouts, _)| *timeouts == key) {
            return connector.clone();
        }
        let connector = SharedHttpConnector::new(Connector::new(key.0, key.1));
        connectors.push((key, connector.clone()));
        connector
    }
}

/// The largest answer read: DynamoDB's are at most 16 MiB (`BatchGetItem`).
const MAX_ANSWER: usize = 32 * 1024 * 1024;

#[derive(Debug, Clone)]
struct Connector {
    client: draftline_http::Client,
    read_timeout: Option<Duration>,
}

impl Connector {
    fn new(connect_timeout: Option<Duration>, read_timeout: Option<Duration>) -> Self {
        Self {
            client: draftline_http::Client::new(connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)),
            read_timeout,
        }
    }

    async fn send(self, request: HttpRequest) -> Result<HttpResponse, ConnectorError> {
        let request = request.try_into_http1x().map_err(|e| ConnectorError::user(e.into()))?;
        let (parts, body) = request.into_parts();
        // DynamoDB's (and the credential providers') bodies are in memory.
        let body = body
            .bytes()
            .map(bytes::Bytes::copy_from_slice)
            .ok_or_else(|| ConnectorError::user("a streaming request body is not supported".into()))?;
        let limits = draftline_http::Limits {
            timeout: self.read_timeout,
            max_body: MAX_ANSWER,
        };
        // A request without an operation is a credential provider's.
        let operation = operation_of(&parts.headers).unwrap_or("credentials").to_owned();
        let sent = std::time::Instant::now();
        let response = self.client.send(http::Request::from_parts(parts, body), limits).await;
        trace::record_request("dynamodb", &operation, trace::span_id(), sent, response.is_ok());
        let response = response.map_err(failure)?;
        let (parts, body) = response.into_parts();
        HttpResponse::try_from(http::Response::from_parts(parts, SdkBody::from(body)))
            .map_err(|e| ConnectorError::other(e.into(), None))
    }
}

/// The DynamoDB operation a request asks for: `X-Amz-Target:
/// DynamoDB_20120810.GetItem` names `GetItem`.
pub fn operation_of(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .and_then(|target| target.rsplit('.').next())
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        HttpConnectorFuture::new(self.clone().send(request))
    }
}

fn failure(err: draftline_http::Error) -> ConnectorError {
    use draftline_http::ErrorKind;
    if err.is_timeout() {
        return ConnectorError::timeout(err.into());
    }
    match err.kind() {
        // A refused, reset or closed connection, or an answer cut short.
        ErrorKind::Connect | ErrorKind::Lost | ErrorKind::Timeout => ConnectorError::io(err.into()),
        ErrorKind::NotSent | ErrorKind::TooLarge | ErrorKind::Refused => {
            ConnectorError::other(format!("DynamoDB request: {err}").into(), None)
        }
    }
}
