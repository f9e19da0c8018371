//! The SDK's HTTP transport: the same `reqwest` client (HTTP/1.1, rustls
//! with the process's one crypto provider) the rest of draftline uses, in
//! place of the SDK's own hyper client. DynamoDB speaks HTTP/1.1 and JSON;
//! the SDK's default client also links an HTTP/2 stack (`h2`), a second
//! hyper client and its own TLS set-up into every function, and none of it
//! is needed. The SDK still does everything above the transport: signing,
//! retries, timeouts, endpoint, (de)serialisation.
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
    draftline_contract::tls::install_crypto_provider();
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

#[derive(Debug, Clone)]
struct Connector {
    /// `None` if the client could not be built (no TLS roots): every request fails.
    http: Option<reqwest::Client>,
    read_timeout: Option<Duration>,
}

impl Connector {
    fn new(connect_timeout: Option<Duration>, read_timeout: Option<Duration>) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| tracing::error!(error = %e, "the DynamoDB HTTP client could not be built"))
            .ok();
        Self { http, read_timeout }
    }

    async fn send(self, request: HttpRequest) -> Result<HttpResponse, ConnectorError> {
        let http = self
            .http
            .ok_or_else(|| ConnectorError::other("the DynamoDB HTTP client could not be built".into(), None))?;
        // DynamoDB's (and the credential providers') bodies are in memory.
        let body = request
            .body()
            .bytes()
            .map(bytes::Bytes::copy_from_slice)
            .ok_or_else(|| ConnectorError::user("a streaming request body is not supported".into()))?;
        let method =
            reqwest::Method::from_bytes(request.method().as_bytes()).map_err(|e| ConnectorError::user(e.into()))?;
        let mut builder = http.request(method, request.uri());
        for (name, value) in request.headers() {
            builder = builder.header(name, value);
        }
        if let Some(timeout) = self.read_timeout {
            builder = builder.timeout(timeout);
        }
        let response = builder.body(body).send().await.map_err(failure)?;
        let mut answer = http::Response::builder().status(response.status());
        if let Some(headers) = answer.headers_mut() {
            headers.extend(response.headers().iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let bytes = response.bytes().await.map_err(failure)?;
        let answer = answer
            .body(SdkBody::from(bytes))
            .map_err(|e| ConnectorError::other(e.into(), None))?;
        HttpResponse::try_from(answer).map_err(|e| ConnectorError::other(e.into(), None))
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        HttpConnectorFuture::new(self.clone().send(request))
    }
}

fn failure(err: reqwest::Error) -> ConnectorError {
    if err.is_timeout() {
        ConnectorError::timeout(err.into())
    } else if err.is_connect() || err.is_request() || err.is_body() {
        ConnectorError::io(err.into())
    } else {
        ConnectorError::other(err.into(), None)
    }
}
