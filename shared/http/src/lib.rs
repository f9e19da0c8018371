//! draftline's one HTTP client: hyper's pooled HTTP/1.1 client, over
//! rustls with the process's one crypto provider for `https://`. Every
//! request a function makes goes through it — DynamoDB (as the AWS SDK's
//! transport), the identity provider's JWKS, Tryton's REST API, the Lambda
//! Runtime API — so a function binary links one HTTP client stack, and each
//! caller states its own time limit and the largest answer it will read.
//!
//! What it does not do, on purpose: follow redirects (an answer is the
//! caller's to judge: Tryton's and the JWKS's must not move), read proxy
//! settings from the environment, or speak HTTP/2 (DynamoDB, Tryton and
//! identity providers all speak HTTP/1.1).
//!
//! The system's root certificates are read on the first `https://`
//! request, not when a client is built: that costs milliseconds a function
//! talking to a local engine over `http://` never needs to pay at a cold
//! start.
//!
//! [`trace`] holds a call's trace context and where its time went: each
//! request records itself into the call it serves.

mod guard;
pub mod trace;

pub use guard::AddressGuard;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;

type Connector = HttpConnector<guard::Resolver>;
type Plain = hyper_util::client::legacy::Client<Connector, Full<Bytes>>;
type Tls = hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<Connector>, Full<Bytes>>;

/// A client: cheap to clone, every clone sharing its pooled connections.
#[derive(Debug, Clone)]
pub struct Client {
    tcp: Connector,
    /// Which addresses it may connect to (`None`: any).
    guard: Option<AddressGuard>,
    /// For `http://` (a local engine, a local Tryton, the Lambda Runtime API).
    plain: Plain,
    /// For `https://`, built on the first such request; `Err` if there is
    /// no TLS set-up (no root certificates).
    tls: Arc<OnceLock<Result<Tls, String>>>,
}

/// What a request may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From sending the request to the last byte of the answer; `None`: no limit.
    pub timeout: Option<Duration>,
    /// The largest answer body read, in bytes.
    pub max_body: usize,
}

/// Why a request got no answer the caller can read.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    /// A connect that timed out (`kind` is then `Connect`).
    connect_timed_out: bool,
    detail: String,
}

/// What kind of failure an [`Error`] is: what the caller needs to tell
/// "nothing was sent" from "it may have arrived".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request was not sent: the URL or the TLS set-up is unusable.
    NotSent,
    /// No connection was made (refused, no such host, connect timeout):
    /// nothing reached the server.
    Connect,
    /// The connection was made and the request may have reached the
    /// server, but the whole answer did not come back within the limit.
    Timeout,
    /// The connection failed after the request was sent (reset, closed,
    /// an answer cut short): it may have reached the server.
    Lost,
    /// The answer's body is larger than [`Limits::max_body`].
    TooLarge,
    /// The client's [`AddressGuard`] refused where the URL leads: nothing
    /// was sent.
    Refused,
}

impl Error {
    fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            connect_timed_out: false,
            detail: detail.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether the failure was a timeout, of the connection or of the answer.
    pub fn is_timeout(&self) -> bool {
        self.kind == ErrorKind::Timeout || self.connect_timed_out
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            ErrorKind::NotSent => "not sent",
            ErrorKind::Connect => "could not connect",
            ErrorKind::Timeout => "no complete answer in time",
            ErrorKind::Lost => "connection lost",
            ErrorKind::TooLarge => "answer too large",
            ErrorKind::Refused => "refused",
        };
        write!(f, "{what}: {}", self.detail)
    }
}

impl std::error::Error for Error {}

impl Client {
    /// A client whose connections must be made within `connect_timeout`.
    pub fn new(connect_timeout: Duration) -> Self {
        Self::connecting(connect_timeout, None)
    }

    /// A client that connects only where `guard` allows: to the address a
    /// URL names, and to every address its host name resolves to, judged
    /// at each connect (webhooks to endpoints a tenant chose).
    pub fn guarded(connect_timeout: Duration, guard: AddressGuard) -> Self {
        Self::connecting(connect_timeout, Some(guard))
    }

    fn connecting(connect_timeout: Duration, guard: Option<AddressGuard>) -> Self {
        draftline_contract::crypto::install_crypto_provider();
        let mut tcp = HttpConnector::new_with_resolver(guard::Resolver::new(guard));
        tcp.set_connect_timeout(Some(connect_timeout));
        tcp.set_nodelay(true);
        let plain =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(tcp.clone());
        tcp.enforce_http(false);
        Self {
            tcp,
            guard,
            plain,
            tls: Arc::default(),
        }
    }

    fn tls(&self) -> Result<Tls, Error> {
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
        built.clone().map_err(|reason| Error::new(ErrorKind::NotSent, reason))
    }

    /// Sends `request` and reads its whole answer, within `limits`. Any
    /// status is an answer; only what kept one from arriving is an [`Error`].
    pub async fn send(&self, request: http::Request<Bytes>, limits: Limits) -> Result<http::Response<Bytes>, Error> {
        let https = match request.uri().scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => {
                return Err(Error::new(
                    ErrorKind::NotSent,
                    format!("not an http(s) URL: {}", request.uri()),
                ));
            }
        };
        if let (Some(guard), Some(address)) = (self.guard, request.uri().host().and_then(guard::literal)) {
            guard(address).map_err(|why| Error::new(ErrorKind::Refused, why))?;
        }
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, Full::new(body));
        let exchange = async {
            let response = if https {
                self.tls()?.request(request).await
            } else {
                self.plain.request(request).await
            }
            .map_err(failure)?;
            let (parts, body) = response.into_parts();
            let declared = parts
                .headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            if declared.is_some_and(|n| usize::try_from(n).map_or(true, |n| n > limits.max_body)) {
                return Err(too_large(limits.max_body));
            }
            let body = Limited::new(body, limits.max_body).collect().await.map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                    too_large(limits.max_body)
                } else {
                    Error::new(ErrorKind::Lost, e.to_string())
                }
            })?;
            Ok(http::Response::from_parts(parts, body.to_bytes()))
        };
        match limits.timeout {
            Some(limit) => tokio::time::timeout(limit, exchange)
                .await
                .map_err(|_| Error::new(ErrorKind::Timeout, format!("{} ms", limit.as_millis())))?,
            None => exchange.await,
        }
    }
}

fn too_large(limit: usize) -> Error {
    Error::new(ErrorKind::TooLarge, format!("more than {limit} bytes"))
}

fn failure(err: hyper_util::client::legacy::Error) -> Error {
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(&err);
    let mut timed_out = false;
    let mut refused = false;
    while let Some(cause) = source {
        refused |= cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(|inner| inner.is::<guard::RefusedAddress>());
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        timed_out |= cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
        source = cause.source();
    }
    if refused {
        Error::new(ErrorKind::Refused, detail)
    } else if err.is_connect() {
        Error {
            connect_timed_out: timed_out,
            ..Error::new(ErrorKind::Connect, detail)
        }
    } else {
        // A reset, closed or cut-short connection after the request went out.
        Error::new(ErrorKind::Lost, detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    const LIMITS: Limits = Limits {
        timeout: Some(Duration::from_secs(5)),
        max_body: 64,
    };

    /// A server that answers each connection with `answer` (or not at all).
    async fn serve(answer: Option<&'static str>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    match answer {
                        Some(answer) => {
                            let _ = socket.write_all(answer.as_bytes()).await;
                        }
                        None => tokio::time::sleep(Duration::from_secs(30)).await,
                    }
                });
            }
        });
        url
    }

    fn get(url: &str) -> http::Request<Bytes> {
        http::Request::get(url).body(Bytes::new()).unwrap()
    }

    #[tokio::test]
    async fn a_guarded_client_refuses_an_address_its_guard_refuses_written_or_resolved() {
        fn no_loopback(address: std::net::IpAddr) -> Result<(), String> {
            if address.is_loopback() {
                Err("loopback".to_owned())
            } else {
                Ok(())
            }
        }
        let url = serve(Some("HTTP/1.1 204 No Content\r\n\r\n")).await;
        let guarded = Client::guarded(Duration::from_secs(1), no_loopback);
        let by_name = url.replace("127.0.0.1", "localhost");
        for url in [&url, &by_name] {
            let err = guarded.send(get(url), LIMITS).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Refused, "{url}: {err}");
            assert!(err.to_string().contains("loopback"), "{err}");
        }
        // The same server, unguarded, answers.
        let answered = Client::new(Duration::from_secs(1))
            .send(get(&by_name), LIMITS)
            .await
            .unwrap();
        assert_eq!(answered.status(), 204);
    }

    #[tokio::test]
    async fn an_answer_of_any_status_is_read_whole() {
        let url = serve(Some("HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\nnope!")).await;
        let response = Client::new(Duration::from_secs(1))
            .send(get(&url), LIMITS)
            .await
            .unwrap();
        assert_eq!(response.status(), 404);
        assert_eq!(response.body().as_ref(), b"nope!");
    }

    #[tokio::test]
    async fn an_answer_over_the_limit_is_not_read_declared_or_not() {
        let declared = serve(Some("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n")).await;
        let err = Client::new(Duration::from_secs(1))
            .send(get(&declared), LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge);
        let body = "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n\
            0123456789012345678901234567890123456789012345678901234567890123456789";
        let undeclared = serve(Some(body)).await;
        let err = Client::new(Duration::from_secs(1))
            .send(get(&undeclared), LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge);
    }

    #[tokio::test]
    async fn nothing_listening_is_a_connect_failure_and_silence_a_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed = format!("http://{}/", listener.local_addr().unwrap());
        drop(listener);
        let err = Client::new(Duration::from_secs(1))
            .send(get(&closed), LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Connect);
        assert!(!err.is_timeout());

        let silent = serve(None).await;
        let limits = Limits {
            timeout: Some(Duration::from_millis(200)),
            ..LIMITS
        };
        let err = Client::new(Duration::from_secs(1))
            .send(get(&silent), limits)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        assert!(err.is_timeout());
    }

    #[tokio::test]
    async fn a_connection_closed_before_the_answer_is_lost() {
        let url = serve(Some("")).await;
        let err = Client::new(Duration::from_secs(1))
            .send(get(&url), LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Lost);
    }

    #[tokio::test]
    async fn a_url_that_is_not_http_is_not_sent() {
        let request = http::Request::get("ftp://example.invalid/").body(Bytes::new()).unwrap();
        let err = Client::new(Duration::from_secs(1))
            .send(request, LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotSent);
    }
}
