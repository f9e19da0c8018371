//! A function on AWS finds its credentials where its platform puts them:
//! the environment, a web identity token exchanged with STS, or the
//! container credentials endpoint. Each case builds the DynamoDB client a
//! deployed function builds ([`Db::connect_aws`]) and sends a real
//! `GetItem` over a socket to a stand-in DynamoDB that records the
//! signature; STS and the container endpoint are stand-ins too, started
//! here on real sockets.

#![allow(clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::ProvideCredentials;
use aws_sdk_dynamodb::types::AttributeValue;
use draftline_contract::settings::Source;
use draftline_dynamo::{AwsEnvironment, ClientOptions, Db};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request a stand-in received.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

type Answer = (u16, &'static str, String);

/// An HTTP/1.1 server on 127.0.0.1 that answers every request with
/// `answer(&request)` and records it.
async fn stand_in(answer: impl Fn(&Received) -> Answer + Send + Sync + 'static) -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = received.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let log = log.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let mut lines = head.split("\r\n");
                let mut start = lines.next().unwrap_or_default().split(' ');
                let (method, path) = (start.next().unwrap_or_default(), start.next().unwrap_or_default());
                let headers: HashMap<String, String> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
                while buf.len() < head_end + length {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let request = Received {
                    method: method.to_owned(),
                    path: path.to_owned(),
                    headers,
                    body: String::from_utf8_lossy(&buf[head_end..]).to_string(),
                };
                let (status, content_type, body) = answer(&request);
                log.lock().expect("log").push(request);
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, received)
}

/// A DynamoDB stand-in that answers every `GetItem` with no item.
async fn dynamodb() -> (String, Arc<Mutex<Vec<Received>>>) {
    stand_in(|_| (200, "application/x-amz-json-1.0", "{}".to_owned())).await
}

fn env(pairs: &[(&str, &str)]) -> Source {
    Source::map(pairs.iter().copied())
}

/// One `GetItem` as a function makes it, on a client built from `aws`.
async fn get_item(aws: AwsEnvironment) -> Result<(), String> {
    let db = Db::connect_aws("draftline", aws, ClientOptions::default());
    db.client()
        .get_item()
        .table_name(db.table())
        .key("pk", AttributeValue::S("T#demo".into()))
        .key("sk", AttributeValue::S("X".into()))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| format!("{:?}", aws_sdk_dynamodb::error::DisplayErrorContext(&e)))
}

/// The access key a request was signed with, and its session token.
fn signed_by(request: &Received) -> (String, Option<String>) {
    let authorization = request.headers.get("authorization").cloned().unwrap_or_default();
    let key = authorization
        .split("Credential=")
        .nth(1)
        .and_then(|c| c.split('/').next())
        .unwrap_or_default()
        .to_owned();
    (key, request.headers.get("x-amz-security-token").cloned())
}

const STS_ANSWER: &str = r#"<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:draftline:functions</SubjectFromWebIdentityToken>
    <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/draftline/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
    <Credentials>
      <SessionToken>FwoGZXIvYXdzE+token/from&amp;sts==</SessionToken>
      <SecretAccessKey>sts-secret</SecretAccessKey>
      <Expiration>2099-01-01T00:00:00Z</Expiration>
      <AccessKeyId>ASIASTSFORDRAFTLINE</AccessKeyId>
    </Credentials>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>"#;

#[tokio::test]
async fn from_the_environment() {
    let (dynamo, seen) = dynamodb().await;
    let aws = AwsEnvironment::read(&env(&[
        ("AWS_REGION", "eu-west-1"),
        ("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT"),
        ("AWS_SECRET_ACCESS_KEY", "env-secret"),
        ("AWS_SESSION_TOKEN", "env-session"),
        ("AWS_ENDPOINT_URL_DYNAMODB", &dynamo),
    ]));
    assert_eq!(aws.credentials.source_name(), "environment");
    get_item(aws).await.expect("GetItem with environment credentials");
    let seen = seen.lock().expect("seen");
    assert_eq!(seen.len(), 1);
    assert_eq!(
        signed_by(&seen[0]),
        ("AKIAENVIRONMENT".to_owned(), Some("env-session".to_owned()))
    );
    let authorization = &seen[0].headers["authorization"];
    assert!(
        authorization.contains("/eu-west-1/dynamodb/aws4_request"),
        "signed for the region: {authorization}"
    );
}

#[tokio::test]
async fn from_a_web_identity_token_exchanged_with_sts() {
    let (sts, exchanges) = stand_in(|_| (200, "text/xml", STS_ANSWER.to_owned())).await;
    let (dynamo, seen) = dynamodb().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJ.first-token.sig\n").expect("token");
    let token_path = token_file.to_string_lossy().to_string();
    let vars = [
        ("AWS_REGION", "eu-west-1"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token_path.as_str()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/draftline"),
        ("AWS_ROLE_SESSION_NAME", "fn-session"),
        ("AWS_ENDPOINT_URL_STS", sts.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", dynamo.as_str()),
    ];
    let aws = AwsEnvironment::read(&env(&vars));
    assert_eq!(aws.credentials.source_name(), "web identity");
    get_item(aws).await.expect("GetItem with web identity credentials");

    let exchange = exchanges.lock().expect("exchanges")[0].clone();
    assert_eq!(exchange.method, "POST");
    assert_eq!(
        exchange.headers.get("content-type").map(String::as_str),
        Some("application/x-www-form-urlencoded")
    );
    let form: HashMap<String, String> = form_urlencoded::parse(exchange.body.as_bytes()).into_owned().collect();
    assert_eq!(form["Action"], "AssumeRoleWithWebIdentity");
    assert_eq!(form["Version"], "2011-06-15");
    assert_eq!(form["RoleArn"], "arn:aws:iam::123456789012:role/draftline");
    assert_eq!(form["RoleSessionName"], "fn-session");
    assert_eq!(form["WebIdentityToken"], "eyJ.first-token.sig");
    assert!(
        !exchange.headers.contains_key("authorization"),
        "the exchange is unsigned"
    );

    let signed: Vec<_> = seen.lock().expect("seen").iter().map(signed_by).collect();
    assert_eq!(
        signed,
        [(
            "ASIASTSFORDRAFTLINE".to_owned(),
            Some("FwoGZXIvYXdzE+token/from&sts==".to_owned())
        )]
    );

    // The token file rotates (EKS rewrites it): each exchange reads it again.
    std::fs::write(&token_file, "eyJ.second-token.sig").expect("token");
    let credentials = AwsEnvironment::read(&env(&vars))
        .credentials
        .provide_credentials()
        .await
        .expect("credentials");
    assert_eq!(credentials.access_key_id(), "ASIASTSFORDRAFTLINE");
    assert_eq!(credentials.secret_access_key(), "sts-secret");
    assert_eq!(
        credentials.expiry(),
        Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(4_070_908_800))
    );
    let last = exchanges
        .lock()
        .expect("exchanges")
        .last()
        .cloned()
        .expect("an exchange");
    let form: HashMap<String, String> = form_urlencoded::parse(last.body.as_bytes()).into_owned().collect();
    assert_eq!(form["WebIdentityToken"], "eyJ.second-token.sig");
}

#[tokio::test]
async fn a_refused_web_identity_says_why_and_reaches_no_table() {
    let (sts, _) = stand_in(|_| {
        (
            403,
            "text/xml",
            "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>".to_owned(),
        )
    })
    .await;
    let (dynamo, seen) = dynamodb().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "eyJ.secret-token.sig").expect("token");
    let token_path = token_file.to_string_lossy().to_string();
    let aws = AwsEnvironment::read(&env(&[
        ("AWS_REGION", "eu-west-1"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token_path.as_str()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/draftline"),
        ("AWS_ENDPOINT_URL_STS", sts.as_str()),
        ("AWS_ENDPOINT_URL_DYNAMODB", dynamo.as_str()),
    ]));
    let err = get_item(aws).await.expect_err("no credentials");
    assert!(err.contains("AccessDenied"), "{err}");
    assert!(!err.contains("secret-token"), "the token never prints: {err}");
    assert!(seen.lock().expect("seen").is_empty());
}

#[tokio::test]
async fn from_the_container_endpoint() {
    let (container, asked) = stand_in(|request| {
        if request.headers.get("authorization").map(String::as_str) == Some("container-token") {
            let body = r#"{"AccessKeyId":"ASIACONTAINER","SecretAccessKey":"container-secret","Token":"container-session","Expiration":"2099-01-01T00:00:00Z","AccountId":"123456789012"}"#;
            (200, "application/json", body.to_owned())
        } else {
            (401, "application/json", r#"{"message":"no"}"#.to_owned())
        }
    })
    .await;
    let (dynamo, seen) = dynamodb().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "container-token\n").expect("token");
    let full_uri = format!("{container}/2023-01-01/credentials");
    let token_path = token_file.to_string_lossy().to_string();
    let aws = AwsEnvironment::read(&env(&[
        ("AWS_REGION", "eu-west-1"),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", full_uri.as_str()),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_path.as_str()),
        // The file wins over the variable, as in aws-config.
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "stale-token"),
        ("AWS_ENDPOINT_URL_DYNAMODB", dynamo.as_str()),
    ]));
    assert_eq!(aws.credentials.source_name(), "container");
    get_item(aws).await.expect("GetItem with container credentials");
    let asked = asked.lock().expect("asked");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].method, "GET");
    assert_eq!(asked[0].path, "/2023-01-01/credentials");
    let seen = seen.lock().expect("seen");
    assert_eq!(
        signed_by(&seen[0]),
        ("ASIACONTAINER".to_owned(), Some("container-session".to_owned()))
    );
}

#[tokio::test]
async fn with_no_source_a_call_fails_saying_what_to_set() {
    let (dynamo, seen) = dynamodb().await;
    let aws = AwsEnvironment::read(&env(&[
        ("AWS_REGION", "eu-west-1"),
        ("AWS_ENDPOINT_URL_DYNAMODB", dynamo.as_str()),
    ]));
    assert_eq!(aws.credentials.source_name(), "none");
    let err = get_item(aws).await.expect_err("no credentials");
    assert!(err.contains("no AWS credentials"), "{err}");
    assert!(seen.lock().expect("seen").is_empty());

    let far = AwsEnvironment::read(&env(&[(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "http://example.com/creds",
    )]));
    let err = far.credentials.provide_credentials().await.expect_err("refused");
    assert!(format!("{err:?}").contains("loopback"), "{err:?}");
}
