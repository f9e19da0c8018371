//! How the SDK client is put together, option by option. [`ClientOptions`]'s
//! default is what every function and the server run; the floor harness
//! (`examples/request_floor.rs`) builds the others side by side to measure
//! what each option costs per request (docs/benchmarks.md, "Issue 33").

use std::time::Duration;

use aws_runtime::invocation_id::InvocationIdInterceptor;
use aws_runtime::request_info::RequestInfoInterceptor;
use aws_runtime::user_agent::UserAgentInterceptor;
use aws_sdk_dynamodb::config::endpoint::{Endpoint, EndpointFuture, Params, ResolveEndpoint};
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{Builder, IdentityCache, StalledStreamProtectionConfig};
use aws_smithy_runtime::client::retries::{RetryPartition, TokenBucket};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
};
use aws_smithy_runtime_api::client::interceptors::{Intercept, OverriddenHooks, disable_interceptor};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

/// How a request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retries {
    /// Three attempts, jittered exponential backoff from 25 ms to 400 ms,
    /// and the SDK's retry token bucket (a client that keeps failing stops
    /// retrying until requests succeed again).
    Standard,
    /// The same attempts, with a bucket that never runs dry.
    UnlimitedBucket,
    /// One attempt.
    Off,
}

/// The options of one SDK client. `Default` is production's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// Resolved credentials are kept by the SDK's lazy cache until they
    /// near expiry. Without it, every request asks the provider (for the
    /// static credentials of a local endpoint that is the same answer).
    pub identity_cache: bool,
    /// How a request is retried.
    pub retries: Retries,
    /// With an explicit endpoint (a local engine), it is used as it is,
    /// without evaluating the SDK's endpoint rules per request. Without
    /// one (AWS), the rules always run: they pick FIPS, dual-stack and
    /// account-based endpoints.
    pub fixed_endpoint: bool,
    /// draftline's interceptor that counts round trips (the tests' counts,
    /// the `--stages` log lines) and records grants.
    pub count_round_trips: bool,
    /// The SDK's informational headers.
    pub sdk_headers: SdkHeaders,
    /// Stalled-stream protection: two interceptors and a wrapper around
    /// every response body.
    pub stalled_stream_protection: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            identity_cache: true,
            retries: Retries::Standard,
            fixed_endpoint: false,
            count_round_trips: true,
            // The SDK builds its user agent per request (language, OS, the
            // features the request used): 4-6 µs of a 50-60 µs request.
            // A fixed one names draftline instead.
            sdk_headers: SdkHeaders {
                user_agent: false,
                ..SdkHeaders::ALL
            },
            // DynamoDB's answers are small and the attempt timeout already
            // bounds a stalled one.
            stalled_stream_protection: false,
        }
    }
}

impl ClientOptions {
    /// `builder` with these options (all but the round-trip counter, which
    /// [`crate::Db`] adds with its own counts).
    pub(crate) fn apply(&self, mut builder: Builder, endpoint: Option<&str>) -> Builder {
        let retries = match self.retries {
            Retries::Off => RetryConfig::disabled(),
            Retries::Standard | Retries::UnlimitedBucket => RetryConfig::standard()
                .with_max_attempts(3)
                .with_initial_backoff(Duration::from_millis(25))
                .with_max_backoff(Duration::from_millis(400)),
        };
        builder = builder.retry_config(retries);
        if self.retries == Retries::UnlimitedBucket {
            builder = builder.retry_partition(
                RetryPartition::custom("draftline-unlimited")
                    .token_bucket(TokenBucket::unlimited())
                    .build(),
            );
        }
        if !self.identity_cache {
            builder = builder.identity_cache(IdentityCache::no_cache());
        }
        if self.fixed_endpoint
            && let Some(url) = endpoint
        {
            builder = builder.endpoint_resolver(Fixed(Endpoint::builder().url(url.to_owned()).build()));
        }
        if self.sdk_headers != SdkHeaders::ALL {
            builder = builder.interceptor(WithoutSdkHeaders(self.sdk_headers));
        }
        if !self.sdk_headers.user_agent {
            builder = builder.interceptor(FixedUserAgent);
        }
        let stalled = if self.stalled_stream_protection {
            StalledStreamProtectionConfig::enabled().build()
        } else {
            StalledStreamProtectionConfig::disabled()
        };
        builder.stalled_stream_protection(stalled)
    }
}

/// An endpoint resolver that answers one endpoint, whatever the request.
#[derive(Debug)]
struct Fixed(Endpoint);

impl ResolveEndpoint for Fixed {
    fn resolve_endpoint<'a>(&'a self, _params: &'a Params) -> EndpointFuture<'a> {
        EndpointFuture::ready(Ok(self.0.clone()))
    }
}

/// The SDK's informational headers, each from an interceptor of its own.
/// Nothing in DynamoDB's answer depends on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdkHeaders {
    /// `user-agent` and `x-amz-user-agent`: the SDK, language, OS and the
    /// features the request used, built per request. Without it, a fixed
    /// `user-agent` ([`USER_AGENT`]) is sent.
    pub user_agent: bool,
    /// `amz-sdk-invocation-id`: a random id shared by a request's attempts.
    pub invocation_id: bool,
    /// `amz-sdk-request`: the attempt's number and the most attempts.
    pub request_info: bool,
}

impl SdkHeaders {
    /// Every header, as the SDK sends them.
    pub const ALL: Self = Self {
        user_agent: true,
        invocation_id: true,
        request_info: true,
    };
}

/// The `user-agent` sent instead of the SDK's.
pub const USER_AGENT: &str = concat!("draftline/", env!("CARGO_PKG_VERSION"), " aws-sdk-rust");

/// Sets `user-agent` to [`USER_AGENT`].
#[derive(Debug)]
struct FixedUserAgent;

impl Intercept for FixedUserAgent {
    fn name(&self) -> &'static str {
        "FixedUserAgent"
    }

    fn overridden_hooks(&self) -> OverriddenHooks {
        OverriddenHooks::MODIFY_BEFORE_SIGNING
    }

    fn modify_before_signing(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        context.request_mut().headers_mut().insert("user-agent", USER_AGENT);
        Ok(())
    }
}

/// Turns off the SDK's informational-header interceptors that are not
/// wanted, for each request (they read the config bag before each hook).
#[derive(Debug)]
struct WithoutSdkHeaders(SdkHeaders);

impl Intercept for WithoutSdkHeaders {
    fn name(&self) -> &'static str {
        "WithoutSdkHeaders"
    }

    fn overridden_hooks(&self) -> OverriddenHooks {
        OverriddenHooks::READ_BEFORE_EXECUTION
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let layer = cfg.interceptor_state();
        if !self.0.user_agent {
            layer.store_put(disable_interceptor::<UserAgentInterceptor>("ClientOptions"));
        }
        if !self.0.invocation_id {
            layer.store_put(disable_interceptor::<InvocationIdInterceptor>("ClientOptions"));
        }
        if !self.0.request_info {
            layer.store_put(disable_interceptor::<RequestInfoInterceptor>("ClientOptions"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::AttributeValue;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::Db;

    /// The head of the one request a `GetItem` through `options` sends to a
    /// local socket, which answers it with an empty item.
    async fn head_sent(options: ClientOptions) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut read = Vec::new();
            let mut buf = [0u8; 4096];
            while !read.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client closed before its request's head");
                read.extend_from_slice(&buf[..n]);
            }
            let body = "{}";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(answer.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&read).to_lowercase()
        });
        let db = Db::connect_with("t", Some(&endpoint), options).await;
        let out = db
            .client()
            .get_item()
            .table_name("t")
            .key("pk", AttributeValue::S("a".into()))
            .key("sk", AttributeValue::S("b".into()))
            .send()
            .await
            .unwrap();
        assert!(out.item().is_none());
        server.await.unwrap()
    }

    #[tokio::test]
    async fn production_sends_a_fixed_user_agent_and_keeps_the_sdks_other_headers() {
        let head = head_sent(ClientOptions::default()).await;
        assert!(
            head.contains(&format!("\r\nuser-agent: {}\r\n", USER_AGENT.to_lowercase())),
            "{head}"
        );
        assert!(!head.contains("x-amz-user-agent"), "{head}");
        assert!(head.contains("amz-sdk-invocation-id: "), "{head}");
        assert!(head.contains("amz-sdk-request: attempt=1; max=3"), "{head}");
        assert!(head.contains("authorization: aws4-hmac-sha256"), "{head}");
    }

    #[tokio::test]
    async fn with_every_sdk_header_the_sdk_builds_its_own_user_agent() {
        let head = head_sent(ClientOptions {
            sdk_headers: SdkHeaders::ALL,
            ..ClientOptions::default()
        })
        .await;
        assert!(head.contains("x-amz-user-agent: aws-sdk-rust"), "{head}");
        assert!(!head.contains("draftline/"), "{head}");
    }
}
