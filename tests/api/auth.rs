use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use draftline_server::auth::mint::{TokenClaims, mint_hs256};
use draftline_server::config::{LOCAL_DEV_SECRET, LOCAL_ISSUER};
use serde_json::json;

use crate::helpers::{TestApp, po_input, seeded_purchase_orders, spawn_app};

fn claims(app: &TestApp) -> TokenClaims {
    TokenClaims::new(
        LOCAL_ISSUER,
        &app.server.url(),
        "buyer-sby",
        "demo",
        "SBY-01",
        "SBY",
        "purchasing:read purchasing:draft inventory:read",
        vec!["buyer".into()],
        600,
    )
}

fn sign(claims: &TokenClaims) -> String {
    mint_hs256(LOCAL_DEV_SECRET, claims).unwrap()
}

#[tokio::test]
async fn bad_credentials_are_401_with_a_challenge_and_are_audited_as_denied() {
    let app = spawn_app().await;
    let mut expired = claims(&app);
    expired.exp = chrono::Utc::now().timestamp() - 3600;
    expired.nbf = expired.exp - 600;
    let mut wrong_audience = claims(&app);
    wrong_audience.aud = "https://someone-else.example.com".into();
    let mut wrong_issuer = claims(&app);
    wrong_issuer.iss = "https://evil.example.com".into();
    let bad_signature = mint_hs256("another-secret-that-is-long-enough-to-pass", &claims(&app)).unwrap();
    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(&app)).unwrap())
    );
    let mut not_yet = claims(&app);
    not_yet.nbf = chrono::Utc::now().timestamp() + 3600;

    let cases: Vec<(&str, Option<String>, &str)> = vec![
        ("no token", None, "No bearer token"),
        ("malformed", Some("Bearer not-a-jwt".into()), "not a well-formed"),
        ("expired", Some(format!("Bearer {}", sign(&expired))), "expired"),
        (
            "not yet valid",
            Some(format!("Bearer {}", sign(&not_yet))),
            "not valid yet",
        ),
        (
            "wrong audience",
            Some(format!("Bearer {}", sign(&wrong_audience))),
            "wrong audience",
        ),
        (
            "wrong issuer",
            Some(format!("Bearer {}", sign(&wrong_issuer))),
            "issuer",
        ),
        ("bad signature", Some(format!("Bearer {bad_signature}")), "signature"),
        ("alg none", Some(format!("Bearer {alg_none}")), "algorithm"),
        ("basic auth", Some("Basic YTpi".into()), "not a well-formed"),
    ];
    let metadata = format!("{}/.well-known/oauth-protected-resource", app.server.url());
    for (case, authorization, text) in &cases {
        let mut headers = vec![("idempotency-key", format!("k-{case}"))];
        if let Some(value) = authorization {
            headers.push(("authorization", value.clone()));
        }
        let reply = app
            .post_raw("purchasing_create_po_draft", &headers, po_input("r").to_string())
            .await;
        assert_eq!(reply.status, 401, "{case}: {:?}", reply.body);
        assert_eq!(reply.error_code(), "UNAUTHENTICATED", "{case}");
        assert!(reply.message().contains(text), "{case}: {}", reply.message());
        assert!(reply.message().contains("Nothing was read or written"), "{case}");
        let challenge = reply.header("www-authenticate").unwrap();
        assert!(challenge.starts_with("Bearer "), "{case}: {challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{metadata}\"")),
            "{case}: {challenge}"
        );
        if authorization.is_some() {
            assert!(challenge.contains("error=\"invalid_token\""), "{case}: {challenge}");
        }
    }
    assert_eq!(
        app.count_kind("purchase_order").await,
        seeded_purchase_orders(),
        "nothing was drafted"
    );
    // An unverified token names nobody: no audit item in any tenant's
    // partition, but every refusal is counted in the bounded trace.
    assert!(app.audit_items().await.is_empty());
    app.flush_anonymous_trace().await;
    let trace = app.anonymous_trace().await;
    let drafts: u64 = trace
        .iter()
        .filter(|((tool, _), _)| tool == "purchasing_create_po_draft")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(drafts, cases.len() as u64, "{trace:?}");
    for reason in [
        "missing",
        "expired",
        "wrong_audience",
        "wrong_issuer",
        "bad_signature",
        "malformed",
    ] {
        assert!(
            trace.contains_key(&("purchasing_create_po_draft".to_owned(), reason.to_owned())),
            "{reason}: {trace:?}"
        );
    }
}

#[tokio::test]
async fn a_caller_without_the_scope_is_403_and_audited_as_denied() {
    let app = spawn_app().await;
    let reply = app
        .call(
            "clerk-sby",
            "purchasing_create_po_draft",
            &po_input("r"),
            &[("idempotency-key", "k".into()), ("x-agent-run-id", "run-clerk".into())],
        )
        .await;
    assert_eq!(reply.status, 403, "{:?}", reply.body);
    assert_eq!(reply.error_code(), "FORBIDDEN");
    assert_eq!(
        reply.header("www-authenticate").unwrap(),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"purchasing:draft\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
            app.server.url()
        )
    );
    assert!(reply.message().contains("purchasing:draft"));
    assert!(reply.message().contains("Nothing was read or written"));
    assert_eq!(app.count_kind("purchase_order").await, seeded_purchase_orders());
    assert_eq!(app.count_kind("idempotency_key").await, 0);
    let audits = app.audit_items().await;
    assert_eq!(audits.len(), 1);
    assert_eq!(audits[0]["outcome"], "denied");
    assert_eq!(audits[0]["code"], "FORBIDDEN");
    assert_eq!(audits[0]["on_behalf_of"], "clerk-sby");
    assert_eq!(audits[0]["agent_run_id"], "run-clerk");
    assert_eq!(audits[0]["pk"], "T#demo#RUN#run-clerk");
}

#[tokio::test]
async fn identity_comes_from_the_token_not_the_arguments() {
    let app = spawn_app().await;
    let reply = app
        .call(
            "buyer-sby",
            "inventory_get_stock",
            &json!({"item_code": "BRG-0042", "branch_id": "JKT-01"}),
            &[],
        )
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.detail_paths(), ["branch_id"]);
}
