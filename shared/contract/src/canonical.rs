//! Canonical JSON (object keys sorted, no whitespace) and the request
//! fingerprint taken of it (DESIGN.md, "Idempotency protocol").

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `value` as canonical JSON: keys sorted by their UTF-8 bytes at every
/// level, no insignificant whitespace, strings escaped as `serde_json` does.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The fingerprint of a call: hex SHA-256 of the canonical JSON of the tool
/// name and the validated input.
pub fn fingerprint(tool: &str, input: &Value) -> String {
    let document = serde_json::json!({ "tool": tool, "input": input });
    hex::encode(Sha256::digest(to_canonical_string(&document).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_level_and_whitespace_dropped() {
        let value = json!({"b": 1, "a": {"d": [true, null], "c": "x\"y"}});
        assert_eq!(
            to_canonical_string(&value),
            r#"{"a":{"c":"x\"y","d":[true,null]},"b":1}"#
        );
    }

    #[test]
    fn the_fingerprint_depends_on_the_tool_and_the_input() {
        let input = json!({"qty": 1});
        assert_ne!(fingerprint("a", &input), fingerprint("b", &input));
        assert_ne!(fingerprint("a", &input), fingerprint("a", &json!({"qty": 2})));
        assert_eq!(fingerprint("a", &input).len(), 64);
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-zA-Z0-9 \"\\\\é]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn reverse_keys(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.reverse();
                Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), reverse_keys(v))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(reverse_keys).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        #[test]
        fn canonical_form_parses_back_to_the_same_value(value in arb_json()) {
            let text = to_canonical_string(&value);
            let parsed: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(parsed, value);
        }

        #[test]
        fn canonical_form_ignores_key_order(value in arb_json()) {
            prop_assert_eq!(to_canonical_string(&value), to_canonical_string(&reverse_keys(&value)));
        }
    }
}
