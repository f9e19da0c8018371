//! The SDK's HTTP transport: hyper's pooled HTTP/1.1 client over the same
//! `hyper-rustls` connector (rustls with the process's one crypto provider)
//! that `reqwest` already links for the rest of draftline, in place of the
//! SDK's default client. DynamoDB speaks HTTP/1.1 and JSON; the SDK's
//! default client also links an HTTP/2 client (`h2`), its own hyper client
//! and TLS set-up into every function, and none of it is needed. (`reqwest`
//! itself was measured here first: its per-request URL parsing and header
//! copies cost 5–15 % more CPU per call than this.) The SDK still does
//! everything above the transport: signing, retries, timeouts, endpoint,
//! (de)serialisation.
//!
//! Failures are told to the SDK as it tells its own: a timeout is a
//! timeout, a refused or broken connection is I/O (both transient: the
//! SDK's retry policy applies, and [`crate::classify`] says unavailable).

use std::sync::{Arc, Mutex, OnceLock};
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
    draftline_contract::crypto::install_crypto_provider();
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

/// The hyper clients: HTTP/1.1, pooled keep-alive connections.
type Plain = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Full<bytes::Bytes>,
>;
type Tls = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    http_body_util::Full<bytes::Bytes>,
>;

#[derive(Debug, Clone)]
struct Connector {
    tcp: hyper_util::client::legacy::connect::HttpConnector,
    /// For `http://` endpoints (a local engine).
    plain: Plain,
    /// For `https://` (AWS), built on the first such request: reading the
    /// system's root certificates costs milliseconds a local engine never
    /// needs to pay at a cold start. `Err` if there is no TLS set-up.
    tls: Arc<OnceLock<Result<Tls, String>>>,
    read_timeout: Option<Duration>,
}

impl Connector {
    fn new(connect_timeout: Option<Duration>, read_timeout: Option<Duration>) -> Self {
        let mut tcp = hyper_util::client::legacy::connect::HttpConnector::new();
        tcp.set_connect_timeout(Some(connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)));
        tcp.set_nodelay(true);
        let plain =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(tcp.clone());
        tcp.enforce_http(false);
        Self {
            tcp,
            plain,
            tls: Arc::default(),
            read_timeout,
        }
    }

    fn tls(&self) -> Result<Tls, ConnectorError> {
        let built = self.tls.get_or_init(|| {
            let provider = rustls::crypto::CryptoProvider::get_default()
                .cloned()
                .ok_or_else(|| "no TLS crypto provider installed".to_owned())?;
            let builder = hyper_rustls::HttpsConnectorBuilder::new()
                .with_provider_and_native_roots(provider)
                .map_err(|e| format!("no TLS root certificates: {e}"))?;
            let https = builder.https_only().enable_http1().wrap_connector(self.tcp.clone());
            Ok(hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(https))
        });
        built
            .clone()
            .map_err(|reason| ConnectorError::other(format!("DynamoDB over HTTPS: {reason}").into(), None))
    }

    async fn send(self, request: HttpRequest) -> Result<HttpResponse, ConnectorError> {
        let request = request.try_into_http1x().map_err(|e| ConnectorError::user(e.into()))?;
        let (parts, body) = request.into_parts();
        // DynamoDB's (and the credential providers') bodies are in memory.
        let body = body
            .bytes()
            .map(bytes::Bytes::copy_from_slice)
            .ok_or_else(|| ConnectorError::user("a streaming request body is not supported".into()))?;
        let https = parts.uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let request = http::Request::from_parts(parts, http_body_util::Full::new(body));
        let exchange = async {
            let response = if https {
                self.tls()?.request(request).await
            } else {
                self.plain.request(request).await
            }
            .map_err(failure)?;
            let (parts, body) = response.into_parts();
            let body = http_body_util::BodyExt::collect(body)
                .await
                .map_err(|e| ConnectorError::io(e.into()))?
                .to_bytes();
            Ok::<_, ConnectorError>(http::Response::from_parts(parts, SdkBody::from(body)))
        };
        let response = match self.read_timeout {
            Some(limit) => tokio::time::timeout(limit, exchange)
                .await
                .map_err(|e| ConnectorError::timeout(e.into()))??,
            None => exchange.await?,
        };
        HttpResponse::try_from(response).map_err(|e| ConnectorError::other(e.into(), None))
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        HttpConnectorFuture::new(self.clone().send(request))
    }
}

fn failure(err: hyper_util::client::legacy::Error) -> ConnectorError {
    let timed_out = std::error::Error::source(&err)
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
    if timed_out {
        ConnectorError::timeout(err.into())
    } else {
        // A refused, reset or closed connection, or an answer cut short.
        ConnectorError::io(err.into())
    }
}
