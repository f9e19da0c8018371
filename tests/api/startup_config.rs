//! Configuration discipline of a deployed function binary: without its
//! required settings it refuses to start, exits non-zero and names the
//! missing variable on stderr; the JWT secret is never printed, in any run.

use crate::function_process::{CHILD_TIMEOUT, FunctionProcess, free_port, start_vercel_function};

/// A secret no other text in the output could contain by accident.
const SECRET: &str = "startup-secret-7f3c9a1e5b2d8c4f6a0e9b3d1c7f5a2e";

/// A complete deployed configuration. Nothing listens at its DynamoDB
/// endpoint: the refusing binaries stop before they need it, and the one that
/// starts only loses the audit write of its single (denied) call.
fn deployed_env() -> Vec<(String, String)> {
    [
        ("DRAFTLINE_TABLE", "draftline"),
        ("DRAFTLINE_DYNAMODB_ENDPOINT", "http://127.0.0.1:9"),
        ("DRAFTLINE_RESOURCE", "https://tools.draftline.test"),
        ("DRAFTLINE_ISSUER", "https://id.draftline.test"),
        ("DRAFTLINE_JWT_SECRET", SECRET),
        ("AWS_REGION", "us-east-1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn without(names: &[&str]) -> Vec<(String, String)> {
    deployed_env()
        .into_iter()
        .filter(|(k, _)| !names.contains(&k.as_str()))
        .collect()
}

fn with(name: &str, value: &str) -> Vec<(String, String)> {
    let mut env = without(&[name]);
    env.push((name.to_owned(), value.to_owned()));
    env
}

/// Runs the binary with `env`, expects a refusal naming every one of `named`.
async fn assert_refuses_to_start(case: &str, binary: &str, env: &[(String, String)], named: &[&str]) {
    let mut function = FunctionProcess::start(binary, env);
    let status = function.wait_exit(CHILD_TIMEOUT).await;
    assert!(!status.success(), "{case}: exited with {status}\n{}", function.output());
    assert_eq!(status.code(), Some(1), "{case}\n{}", function.output());
    let stderr = function.stderr();
    assert!(stderr.contains("refusing to start"), "{case}: {stderr}");
    for name in named {
        assert!(stderr.contains(name), "{case}: {name} is not named in: {stderr}");
    }
    function.assert_never_printed(SECRET, &format!("{case}: the JWT secret"));
}

#[tokio::test]
async fn each_missing_required_variable_stops_the_function_with_its_name_on_stderr() {
    let binary = env!("CARGO_BIN_EXE_purchasing_create_po_draft");
    assert_refuses_to_start(
        "no resource",
        binary,
        &without(&["DRAFTLINE_RESOURCE"]),
        &["DRAFTLINE_RESOURCE"],
    )
    .await;
    assert_refuses_to_start(
        "no issuer",
        binary,
        &without(&["DRAFTLINE_ISSUER"]),
        &["DRAFTLINE_ISSUER"],
    )
    .await;
    assert_refuses_to_start(
        "no verifier",
        binary,
        &without(&["DRAFTLINE_JWKS_URL", "DRAFTLINE_JWT_SECRET"]),
        &["DRAFTLINE_JWKS_URL", "DRAFTLINE_JWT_SECRET"],
    )
    .await;
    // Verifying by JWKS only leaves no secret to seal pagination cursors with.
    let mut jwks_only = without(&["DRAFTLINE_JWT_SECRET"]);
    jwks_only.push((
        "DRAFTLINE_JWKS_URL".to_owned(),
        "http://127.0.0.1:9/jwks.json".to_owned(),
    ));
    assert_refuses_to_start(
        "jwks only, no cursor secret",
        binary,
        &jwks_only,
        &["DRAFTLINE_CURSOR_SECRET"],
    )
    .await;
    // Set but empty is as good as missing.
    assert_refuses_to_start(
        "empty issuer",
        binary,
        &with("DRAFTLINE_ISSUER", "  "),
        &["DRAFTLINE_ISSUER"],
    )
    .await;
}

#[tokio::test]
async fn unusable_settings_are_named_and_a_short_secret_is_not_echoed() {
    let binary = env!("CARGO_BIN_EXE_inventory_get_stock");
    assert_refuses_to_start(
        "resource is not a URL",
        binary,
        &with("DRAFTLINE_RESOURCE", "tools.draftline.test"),
        &["DRAFTLINE_RESOURCE"],
    )
    .await;
    let short = "short-secret-9d41";
    let mut function = FunctionProcess::start(binary, &with("DRAFTLINE_JWT_SECRET", short));
    let status = function.wait_exit(CHILD_TIMEOUT).await;
    assert!(!status.success());
    assert!(
        function.stderr().contains("DRAFTLINE_JWT_SECRET"),
        "{}",
        function.output()
    );
    function.assert_never_printed(short, "the short secret");
}

/// Runs `binary` with `env` and expects it to refuse, naming `name` and
/// saying why in words that include each of `words`.
async fn assert_unsafe(case: &str, binary: &str, env: &[(String, String)], name: &str, words: &[&str]) {
    let mut function = FunctionProcess::start(binary, env);
    let status = function.wait_exit(CHILD_TIMEOUT).await;
    assert_eq!(status.code(), Some(1), "{case}\n{}", function.output());
    let stderr = function.stderr();
    assert!(stderr.contains("refusing to start"), "{case}: {stderr}");
    assert!(stderr.contains(&format!("{name} is unsafe")), "{case}: {stderr}");
    for word in words {
        assert!(stderr.contains(word), "{case}: '{word}' is not said in: {stderr}");
    }
    function.assert_never_printed(SECRET, &format!("{case}: the JWT secret"));
}

#[tokio::test]
async fn an_unsafe_configuration_refuses_to_start_and_says_which_variable_and_why() {
    let tools = env!("CARGO_BIN_EXE_purchasing_create_po_draft");
    let mut jwks = deployed_env();
    jwks.push(("DRAFTLINE_JWKS_URL".into(), "http://id.draftline.test/jwks.json".into()));
    assert_unsafe(
        "jwks over http",
        tools,
        &jwks,
        "DRAFTLINE_JWKS_URL",
        &["plain http off loopback", "in clear"],
    )
    .await;

    let mut tryton = deployed_env();
    tryton.extend(
        [
            ("DRAFTLINE_ERP", "tryton"),
            ("DRAFTLINE_TRYTON_URL", "http://erp.draftline.test:8000"),
            ("DRAFTLINE_TRYTON_DATABASE", "demo"),
            ("DRAFTLINE_TRYTON_KEY", "tryton-key-never-sent-in-clear"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    assert_unsafe(
        "tryton over http",
        tools,
        &tryton,
        "DRAFTLINE_TRYTON_URL",
        &["REST key"],
    )
    .await;

    let review = env!("CARGO_BIN_EXE_review");
    let mut oidc = deployed_env();
    oidc.extend(
        [
            ("DRAFTLINE_OIDC_ISSUER", "http://id.draftline.test"),
            ("DRAFTLINE_OIDC_CLIENT_ID", "draftline-review"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    assert_unsafe(
        "oidc over http",
        review,
        &oidc,
        "DRAFTLINE_OIDC_ISSUER",
        &["plain http off loopback"],
    )
    .await;

    let public = with("DRAFTLINE_JWT_SECRET", draftline_server::config::LOCAL_DEV_SECRET);
    assert_unsafe(
        "the public local secret",
        tools,
        &public,
        "DRAFTLINE_JWT_SECRET",
        &["local-development secret", "anyone could mint tokens"],
    )
    .await;

    // On loopback, plain http and the local secret are what local development uses.
    let mut local = with("DRAFTLINE_RESOURCE", "http://127.0.0.1:3999");
    local.retain(|(k, _)| k != "DRAFTLINE_JWT_SECRET");
    local.push((
        "DRAFTLINE_JWT_SECRET".into(),
        draftline_server::config::LOCAL_DEV_SECRET.into(),
    ));
    local.push(("DRAFTLINE_JWKS_URL".into(), "http://127.0.0.1:9/jwks.json".into()));
    // It starts (the process is stopped when it is dropped).
    let (function, _port) = start_vercel_function(tools, &local).await;
    drop(function);
}

#[tokio::test]
async fn a_function_on_lambda_refuses_to_start_the_same_way() {
    // The runtime API address is never contacted: the configuration is read first.
    let mut env = without(&["DRAFTLINE_RESOURCE"]);
    env.extend(
        [
            ("AWS_LAMBDA_RUNTIME_API", format!("127.0.0.1:{}", free_port())),
            ("AWS_LAMBDA_FUNCTION_NAME", "inventory_get_stock".to_owned()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256".to_owned()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".to_owned()),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    );
    assert_refuses_to_start(
        "lambda, no resource",
        env!("CARGO_BIN_EXE_inventory_get_stock"),
        &env,
        &["DRAFTLINE_RESOURCE"],
    )
    .await;
}

#[tokio::test]
async fn a_fully_configured_function_starts_and_never_prints_its_secret() {
    let (mut function, port) =
        start_vercel_function(env!("CARGO_BIN_EXE_purchasing_create_po_draft"), &deployed_env()).await;
    draftline_contract::crypto::install_crypto_provider();
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .unwrap();
    let ping = http
        .get(format!("http://127.0.0.1:{port}/_vercel/ping"))
        .send()
        .await
        .unwrap();
    assert_eq!(ping.status(), 200);
    // A call with a token signed by that secret: the secret still never shows.
    let token = draftline_server::auth::mint::mint_hs256(
        SECRET,
        &draftline_server::auth::mint::TokenClaims::new(
            "https://id.draftline.test",
            "https://tools.draftline.test",
            "buyer-sby",
            "demo",
            "SBY-01",
            "SBY",
            "purchasing:read",
            vec![],
            600,
        ),
    )
    .unwrap();
    let response = http
        .post(format!("http://127.0.0.1:{port}/api/purchasing_create_po_draft"))
        .bearer_auth(&token)
        .body("{}")
        .send()
        .await
        .unwrap();
    // Authenticated, but without the draft scope.
    assert_eq!(response.status(), 403);
    assert!(function.exited().is_none(), "{}", function.output());
    function.assert_never_printed(SECRET, "the JWT secret");
    function.assert_never_printed(&token, "the bearer token");
}

#[tokio::test]
async fn a_claim_mapping_that_could_never_map_a_token_stops_the_function_naming_its_path() {
    let binary = env!("CARGO_BIN_EXE_inventory_get_stock");
    let issuers = |claims: &str| {
        let mut env = without(&["DRAFTLINE_ISSUER"]);
        let settings = format!(
            r#"{{"issuers": [{{"issuer": "https://id.draftline.test", "hs256": true, "tenants": ["demo"], "claims": {claims}}}]}}"#
        );
        env.push(("DRAFTLINE_ISSUERS".to_owned(), settings));
        env
    };
    assert_refuses_to_start(
        "a claim path that does not parse",
        binary,
        &issuers(r#"{"scopes": {"from": "realm..roles", "map": {"buyer": "inventory:read"}}}"#),
        &["DRAFTLINE_ISSUERS", "'realm..roles' is not a claim path"],
    )
    .await;
    assert_refuses_to_start(
        "a branch map with no entries",
        binary,
        &issuers(r#"{"branch": {"from": "groups", "map": {}}}"#),
        &["DRAFTLINE_ISSUERS", "issuers[0].claims.branch.map: has no entries"],
    )
    .await;
    // The same settings with a usable mapping start and answer.
    let (mut function, port) = start_vercel_function(binary, &issuers(r#"{"scopes": "scp"}"#)).await;
    let ping = reqwest::get(format!("http://127.0.0.1:{port}/_vercel/ping"))
        .await
        .unwrap();
    assert_eq!(ping.status(), 200);
    assert!(function.exited().is_none(), "{}", function.output());
}
