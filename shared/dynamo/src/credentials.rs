//! Where a deployed function's AWS region, credentials and DynamoDB
//! endpoint come from: the environment its platform gives it, read here
//! instead of by `aws-config`. `aws-config` also links the STS client
//! (`aws-sdk-sts`), profile-file parsing, IMDS and their XML and query
//! protocols into every function; a serverless function uses none of them
//! but its platform's variables.
//!
//! Credentials, in `aws-config`'s order, the first source configured wins:
//! 1. **environment**: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!    `AWS_SESSION_TOKEN` (Lambda, and a Vercel project's settings);
//! 2. **web identity**: `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`
//!    (`AWS_ROLE_SESSION_NAME`), exchanged with STS'
//!    `AssumeRoleWithWebIdentity` (EKS, and any OIDC federation); the
//!    token file is read again at each exchange, since it rotates;
//! 3. **container**: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or
//!    `AWS_CONTAINER_CREDENTIALS_FULL_URI`, with the token of
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN` (ECS, EKS Pod Identity, Lambda
//!    SnapStart).
//!
//! Not read: profile files (`~/.aws/config`, SSO) and EC2's instance
//! metadata. On a workstation, `aws configure export-credentials --format
//! env` turns a profile into the first source.
//!
//! Temporary credentials carry their expiry; the SDK's identity cache asks
//! again before they expire. No secret is ever written to a log or an error.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{self, ProvideCredentials};
use aws_smithy_types::date_time::{DateTime, Format};
use bytes::Bytes;
use draftline_contract::settings::Source as Settings;

/// The most an exchange with STS or the container endpoint may take
/// (`aws-config`'s read timeout for both).
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);
/// Their answers are a few kilobytes.
const MAX_ANSWER: usize = 64 * 1024;
/// ECS' container credentials host, for a relative URI.
const ECS_HOST: &str = "http://169.254.170.2";

/// What a DynamoDB client on AWS is configured with, read from the
/// deployment's settings (the process environment, or a map in tests).
#[derive(Debug)]
pub struct AwsEnvironment {
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    pub region: Option<String>,
    /// `AWS_ENDPOINT_URL_DYNAMODB`, else `AWS_ENDPOINT_URL`: a DynamoDB API
    /// other than AWS' regional one (a VPC endpoint, a local engine).
    pub endpoint: Option<String>,
    /// `AWS_USE_FIPS_ENDPOINT=true`.
    pub use_fips: bool,
    /// `AWS_USE_DUALSTACK_ENDPOINT=true`.
    pub use_dual_stack: bool,
    /// Where the credentials come from.
    pub credentials: Chain,
}

impl AwsEnvironment {
    /// Reads `env`.
    pub fn read(env: &Settings) -> Self {
        let region = env.get("AWS_REGION").or_else(|| env.get("AWS_DEFAULT_REGION"));
        let flag = |name: &str| env.get(name).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        Self {
            endpoint: env
                .get("AWS_ENDPOINT_URL_DYNAMODB")
                .or_else(|| env.get("AWS_ENDPOINT_URL")),
            use_fips: flag("AWS_USE_FIPS_ENDPOINT"),
            use_dual_stack: flag("AWS_USE_DUALSTACK_ENDPOINT"),
            credentials: Chain::read(env, region.as_deref()),
            region,
        }
    }
}

/// The credential source the environment configures (see the module's
/// documentation for the order).
#[derive(Debug)]
pub struct Chain {
    source: Source,
}

#[derive(Debug)]
enum Source {
    Static(Credentials),
    WebIdentity(WebIdentity),
    Container(Container),
    /// Configured wrongly, or not at all: every request fails with this.
    Unusable(String),
}

#[derive(Debug)]
struct WebIdentity {
    http: draftline_http::Client,
    token_file: String,
    role_arn: String,
    session_name: String,
    sts: String,
}

#[derive(Debug)]
struct Container {
    http: draftline_http::Client,
    uri: http::Uri,
    token_file: Option<String>,
    /// Debug-printed as `Some(..)` only: [`Token`] hides its value.
    token: Option<Token>,
}

/// A secret that prints as `***`.
struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Chain {
    fn read(env: &Settings, region: Option<&str>) -> Self {
        let source = if let (Some(id), Some(secret)) = (env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY"))
        {
            Source::Static(Credentials::new(
                id,
                secret,
                env.get("AWS_SESSION_TOKEN"),
                None,
                "environment",
            ))
        } else if let Some(token_file) = env.get("AWS_WEB_IDENTITY_TOKEN_FILE") {
            match (env.get("AWS_ROLE_ARN"), sts_endpoint(env, region)) {
                (Some(role_arn), Ok(sts)) => Source::WebIdentity(WebIdentity {
                    http: exchange_client(),
                    token_file,
                    role_arn,
                    session_name: env.get("AWS_ROLE_SESSION_NAME").unwrap_or_else(session_name),
                    sts,
                }),
                (None, _) => Source::Unusable("AWS_WEB_IDENTITY_TOKEN_FILE is set without AWS_ROLE_ARN".to_owned()),
                (_, Err(reason)) => Source::Unusable(reason),
            }
        } else if let Some(relative) = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            container(format!("{ECS_HOST}{relative}"), env, false)
        } else if let Some(full) = env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            container(full, env, true)
        } else {
            Source::Unusable(
                "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
                 AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or a container credentials URI"
                    .to_owned(),
            )
        };
        Self { source }
    }

    /// Which source this is: `environment`, `web identity`, `container`,
    /// or `none` (for the start-up log line).
    pub fn source_name(&self) -> &'static str {
        match self.source {
            Source::Static(_) => "environment",
            Source::WebIdentity(_) => "web identity",
            Source::Container(_) => "container",
            Source::Unusable(_) => "none",
        }
    }

    async fn load(&self) -> provider::Result {
        match &self.source {
            Source::Static(credentials) => Ok(credentials.clone()),
            Source::WebIdentity(web) => web.exchange().await,
            Source::Container(container) => container.fetch().await,
            Source::Unusable(reason) => Err(CredentialsError::not_loaded(reason.clone())),
        }
    }
}

impl ProvideCredentials for Chain {
    fn provide_credentials<'a>(&'a self) -> provider::future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        provider::future::ProvideCredentials::new(self.load())
    }
}

/// STS' endpoint: `AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`, else the
/// region's (the regional endpoint, as `aws-config` uses by default).
fn sts_endpoint(env: &Settings, region: Option<&str>) -> Result<String, String> {
    if let Some(url) = env.get("AWS_ENDPOINT_URL_STS").or_else(|| env.get("AWS_ENDPOINT_URL")) {
        return Ok(url);
    }
    let region = region.ok_or("web identity credentials need AWS_REGION (STS is asked in the function's region)")?;
    let suffix = if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    Ok(format!("https://sts.{region}.{suffix}"))
}

/// `aws-config`'s default session name shape, with draftline's name.
fn session_name() -> String {
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("draftline-{millis}")
}

fn container(uri: String, env: &Settings, full: bool) -> Source {
    let parsed: http::Uri = match uri.parse() {
        Ok(parsed) => parsed,
        Err(_) => return Source::Unusable("the container credentials URI is not a URI".to_owned()),
    };
    if full && !full_uri_allowed(&parsed) {
        return Source::Unusable(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback address or the \
             ECS/EKS container hosts (169.254.170.2, 169.254.170.23, fd00:ec2::23)"
                .to_owned(),
        );
    }
    Source::Container(Container {
        http: exchange_client(),
        uri: parsed,
        token_file: env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
        token: env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN").map(Token),
    })
}

/// The HTTP client of a source that asks for its credentials (none is
/// built for credentials in the environment).
fn exchange_client() -> draftline_http::Client {
    draftline_http::Client::new(Duration::from_secs(2))
}

/// `aws-config`'s rule for a full URI: https anywhere; http only to this
/// machine or the container agents' link-local hosts.
fn full_uri_allowed(uri: &http::Uri) -> bool {
    match uri.scheme_str() {
        Some("https") => true,
        Some("http") => {
            let host = uri
                .host()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']');
            if host.eq_ignore_ascii_case("localhost") {
                return true;
            }
            match host.parse::<std::net::IpAddr>() {
                Ok(ip) => {
                    ip.is_loopback()
                        || ip == std::net::IpAddr::from([169, 254, 170, 2])
                        || ip == std::net::IpAddr::from([169, 254, 170, 23])
                        || ip == std::net::IpAddr::from([0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x23])
                }
                Err(_) => false,
            }
        }
        _ => false,
    }
}

impl WebIdentity {
    async fn exchange(&self) -> provider::Result {
        let token = tokio::fs::read_to_string(&self.token_file).await.map_err(|e| {
            CredentialsError::invalid_configuration(format!(
                "the web identity token file {} cannot be read: {e}",
                self.token_file
            ))
        })?;
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("Action", "AssumeRoleWithWebIdentity")
            .append_pair("Version", "2011-06-15")
            .append_pair("RoleArn", &self.role_arn)
            .append_pair("RoleSessionName", &self.session_name)
            .append_pair("WebIdentityToken", token.trim())
            .finish();
        let request = http::Request::post(self.sts.as_str())
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Bytes::from(body))
            .map_err(|_| CredentialsError::invalid_configuration("the STS endpoint is not a URL"))?;
        let answer = send(&self.http, request, "STS").await?;
        let xml = std::str::from_utf8(answer.body())
            .map_err(|_| CredentialsError::provider_error("STS answered with a body that is not UTF-8"))?;
        if !answer.status().is_success() {
            let code = tag(xml, "Code").unwrap_or("no error code");
            let message = tag(xml, "Message").unwrap_or("");
            let err = format!(
                "STS refused AssumeRoleWithWebIdentity ({}): {code} {message}",
                answer.status()
            );
            return Err(if answer.status().is_server_error() {
                CredentialsError::provider_error(err)
            } else {
                CredentialsError::invalid_configuration(err)
            });
        }
        let credentials = tag(xml, "Credentials")
            .ok_or_else(|| CredentialsError::provider_error("STS' answer holds no Credentials"))?;
        let field = |name: &str| {
            tag(credentials, name)
                .map(unescape)
                .ok_or_else(|| CredentialsError::provider_error(format!("STS' answer holds no {name}")))
        };
        Ok(Credentials::new(
            field("AccessKeyId")?,
            field("SecretAccessKey")?,
            Some(field("SessionToken")?),
            Some(expiry(&field("Expiration")?)?),
            "web identity",
        ))
    }
}

impl Container {
    async fn fetch(&self) -> provider::Result {
        let token = match &self.token_file {
            Some(file) => Some(tokio::fs::read_to_string(file).await.map_err(|e| {
                CredentialsError::invalid_configuration(format!(
                    "the container authorization token file {file} cannot be read: {e}"
                ))
            })?),
            None => self.token.as_ref().map(|t| t.0.clone()),
        };
        let mut request = http::Request::get(self.uri.clone()).header(http::header::ACCEPT, "application/json");
        if let Some(token) = token {
            let value = http::HeaderValue::from_str(token.trim()).map_err(|_| {
                CredentialsError::invalid_configuration("the container authorization token is not a valid header value")
            })?;
            request = request.header(http::header::AUTHORIZATION, value);
        }
        let request = request
            .body(Bytes::new())
            .map_err(|_| CredentialsError::invalid_configuration("the container credentials URI is not a URL"))?;
        let answer = send(&self.http, request, "the container credentials endpoint").await?;
        if !answer.status().is_success() {
            return Err(CredentialsError::provider_error(format!(
                "the container credentials endpoint answered {}",
                answer.status()
            )));
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Answer {
            access_key_id: String,
            secret_access_key: String,
            token: Option<String>,
            expiration: Option<String>,
        }
        let found: Answer = serde_json::from_slice(answer.body()).map_err(|e| {
            // serde_json names the place, never the value.
            CredentialsError::provider_error(format!("the container credentials answer is not usable: {e}"))
        })?;
        let expiry = found.expiration.as_deref().map(expiry).transpose()?;
        Ok(Credentials::new(
            found.access_key_id,
            found.secret_access_key,
            found.token,
            expiry,
            "container",
        ))
    }
}

async fn send(
    http: &draftline_http::Client,
    request: http::Request<Bytes>,
    whom: &str,
) -> Result<http::Response<Bytes>, CredentialsError> {
    let limits = draftline_http::Limits {
        timeout: Some(EXCHANGE_TIMEOUT),
        max_body: MAX_ANSWER,
    };
    http.send(request, limits).await.map_err(|e| {
        if e.is_timeout() {
            CredentialsError::provider_timed_out(EXCHANGE_TIMEOUT)
        } else {
            CredentialsError::provider_error(format!("{whom} could not be asked: {e}"))
        }
    })
}

fn expiry(text: &str) -> Result<SystemTime, CredentialsError> {
    DateTime::from_str(text, Format::DateTime)
        .ok()
        .and_then(|t| SystemTime::try_from(t).ok())
        .ok_or_else(|| CredentialsError::provider_error(format!("the credentials' expiration is not a time: {text}")))
}

/// The text inside the first `<name>…</name>` of `xml` (STS' answers have
/// no attributes on these elements and no nesting of one name).
fn tag<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&close)?;
    Some(xml[start..end].trim())
}

/// XML's five predefined entities (the only escapes STS' values can hold).
fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_uri_is_allowed_over_https_or_to_a_local_or_container_host() {
        let allowed = |u: &str| full_uri_allowed(&u.parse().unwrap_or_default());
        assert!(allowed("https://creds.example.com/v1"));
        assert!(allowed("http://127.0.0.1:9000/creds"));
        assert!(allowed("http://localhost/creds"));
        assert!(allowed("http://[::1]:80/creds"));
        assert!(allowed("http://169.254.170.2/v2/credentials"));
        assert!(allowed("http://169.254.170.23/v1/credentials"));
        assert!(allowed("http://[fd00:ec2::23]/v1/credentials"));
        assert!(!allowed("http://example.com/creds"));
        assert!(!allowed("http://10.0.0.1/creds"));
        assert!(!allowed("ftp://127.0.0.1/creds"));
    }

    #[test]
    fn sts_is_asked_in_the_region_unless_an_endpoint_is_set() {
        let none = Settings::map::<String, String>([]);
        assert_eq!(
            sts_endpoint(&none, Some("eu-west-1")).as_deref(),
            Ok("https://sts.eu-west-1.amazonaws.com")
        );
        assert_eq!(
            sts_endpoint(&none, Some("cn-north-1")).as_deref(),
            Ok("https://sts.cn-north-1.amazonaws.com.cn")
        );
        assert!(sts_endpoint(&none, None).is_err());
        let set = Settings::map([("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1")]);
        assert_eq!(sts_endpoint(&set, None).as_deref(), Ok("http://127.0.0.1:1"));
    }

    #[test]
    fn a_tag_and_its_escapes_are_read() {
        let xml =
            "<R><Credentials><AccessKeyId>AK</AccessKeyId><SessionToken> a&amp;b&lt; </SessionToken></Credentials></R>";
        let credentials = tag(xml, "Credentials").unwrap_or_default();
        assert_eq!(tag(credentials, "AccessKeyId"), Some("AK"));
        assert_eq!(tag(credentials, "SessionToken").map(unescape).as_deref(), Some("a&b<"));
        assert_eq!(tag(credentials, "Expiration"), None);
    }

    #[test]
    fn a_container_token_never_prints() {
        let env = Settings::map([
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds"),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "very-secret"),
        ]);
        let chain = Chain::read(&env, None);
        assert_eq!(chain.source_name(), "container");
        assert!(!format!("{chain:?}").contains("very-secret"));
    }
}
