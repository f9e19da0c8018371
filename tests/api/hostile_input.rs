//! Anything a caller can send gets a clear 4xx, never a 5xx: every tool, fed
//! hostile bodies and every property of its schema replaced by wrong values.

use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// Values of every JSON type, and some that stress parsers and validators.
fn wrong_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!(0),
        json!(1.5e308),
        json!(-9_223_372_036_854_775_808i64),
        json!(18_446_744_073_709_551_615u64),
        json!(""),
        json!("x".repeat(5000)),
        json!("🦀\u{0}\u{202e}#T#other#B#JKT-01"),
        json!("2026-02-30"),
        json!([]),
        json!([null, 1, "a"]),
        json!({}),
        json!({"$ref": "#/"}),
    ]
}

#[tokio::test]
async fn no_hostile_input_gets_a_server_error_from_any_tool() {
    let app = spawn_app().await;
    let tools: Vec<(String, Value)> = app
        .server
        .app
        .registry()
        .all()
        .map(|d| (d.name.to_owned(), d.input_schema.clone()))
        .collect();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let raw_bodies: Vec<String> = vec![
        String::new(),
        "null".into(),
        "{".into(),
        "{\"a\":1}{\"b\":2}".into(),
        deep,
        "\u{feff}{}".into(),
        "{\"lines\": [".repeat(200),
    ];
    let user_for = |name: &str| {
        if name.starts_with("sales") || name.starts_with("finance") {
            "sales-bdg"
        } else {
            "buyer-sby"
        }
    };
    let mut calls = 0;
    for (name, schema) in &tools {
        let user = user_for(name);
        let key = [("idempotency-key", format!("hostile-{name}"))];
        for body in &raw_bodies {
            let token = format!("Bearer {}", app.token(user));
            let reply = app
                .post_raw(name, &[("authorization", token), key[0].clone()], body.clone())
                .await;
            assert!(
                reply.status < 500,
                "{name} {body:.40}: {} {:?}",
                reply.status,
                reply.body
            );
            calls += 1;
        }
        // Every property, in turn, replaced by each wrong value; the rest null.
        let properties: Vec<String> = schema["properties"].as_object().unwrap().keys().cloned().collect();
        for property in &properties {
            for value in wrong_values() {
                let mut input = serde_json::Map::new();
                for p in &properties {
                    input.insert(p.clone(), Value::Null);
                }
                input.insert(property.clone(), value.clone());
                let reply = app.call(user, name, &Value::Object(input), &key).await;
                assert!(
                    reply.status < 500,
                    "{name}.{property} = {value:.60}: {} {:?}",
                    reply.status,
                    reply.body
                );
                assert!(!reply.body.to_string().contains("panicked"));
                calls += 1;
            }
        }
    }
    println!("{calls} hostile calls, none answered 5xx");
    assert!(calls > 300, "{calls} hostile calls");
}
