//! JSON Schemas in OpenAI strict form, derived from the Rust types.
//!
//! `schemars` reads the serde and validator attributes of a type; this module
//! post-processes its output so that every object has
//! `additionalProperties: false`, every property is listed in `required`, and
//! properties that were optional become nullable (`["string", "null"]`).
//! Subschemas are inlined so clients that do not resolve `$ref` still work,
//! and keywords strict mode rejects (`default`, non-standard `format`s) are
//! dropped.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The `format` values strict mode accepts.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The strict schema of `T`.
pub fn strict_schema_for<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut value = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut value {
        root.remove("$schema");
        root.remove("title");
    }
    strictify(&mut value);
    value
}

fn strictify(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("default");
    if let Some(Value::String(format)) = map.get("format")
        && !STRICT_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    if map.get("properties").is_some_and(Value::is_object) {
        let required: Vec<String> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = map.get_mut("properties") else {
            return;
        };
        let mut all = Vec::with_capacity(properties.len());
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                make_nullable(property);
            }
            strictify(property);
            all.push(Value::String(name.clone()));
        }
        map.insert("required".into(), Value::Array(all));
        map.insert("additionalProperties".into(), Value::Bool(false));
    } else if map.get("type") == Some(&json!("object")) {
        map.insert("properties".into(), Value::Object(Map::new()));
        map.insert("required".into(), Value::Array(Vec::new()));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for keyword in ["items", "not", "if", "then", "else", "contains"] {
        if let Some(sub) = map.get_mut(keyword) {
            strictify(sub);
        }
    }
    for keyword in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(subs)) = map.get_mut(keyword) {
            subs.iter_mut().for_each(strictify);
        }
    }
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(keyword) {
            defs.values_mut().for_each(strictify);
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null"))
}

fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = t.clone();
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
        }
        Some(_) => {}
        None => {
            if let Some(Value::Array(options)) = map.get_mut("anyOf") {
                if !options.iter().any(is_null_schema) {
                    options.push(json!({"type": "null"}));
                }
                return;
            }
            let inner = std::mem::take(map);
            map.insert("anyOf".into(), json!([Value::Object(inner), {"type": "null"}]));
            return;
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

/// Problems that make `schema` invalid in strict mode, as JSON paths. Empty when valid.
pub fn strict_violations(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, "$", &mut out);
    out
}

fn check(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.contains_key("$ref") {
        out.push(format!("{path}: uses $ref"));
    }
    if map.contains_key("default") {
        out.push(format!("{path}: has a default"));
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(format!("{path}: additionalProperties is not false"));
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, sub) in props {
            if !required.contains(&name.as_str()) {
                out.push(format!("{path}.{name}: not required"));
            }
            check(sub, &format!("{path}.{name}"), out);
        }
    } else if map.get("type") == Some(&json!("object")) {
        out.push(format!("{path}: object without properties"));
    }
    if let Some(items) = map.get("items") {
        check(items, &format!("{path}[]"), out);
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        if let Some(subs) = map.get(keyword).and_then(Value::as_array) {
            for (i, sub) in subs.iter().enumerate() {
                check(sub, &format!("{path}.{keyword}[{i}]"), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Line {
        code: String,
        qty: u32,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Input {
        name: String,
        note: Option<String>,
        line: Option<Line>,
        lines: Vec<Line>,
    }

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let schema = strict_schema_for::<Input>();
        assert_eq!(schema["required"], json!(["name", "note", "line", "lines"]));
        assert_eq!(schema["properties"]["note"]["type"], json!(["string", "null"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(
            schema["properties"]["lines"]["items"]["additionalProperties"],
            json!(false)
        );
        assert!(
            strict_violations(&schema).is_empty(),
            "{:?}",
            strict_violations(&schema)
        );
        assert!(
            schema["properties"]["lines"]["items"]["properties"]["qty"]
                .get("format")
                .is_none()
        );
    }

    #[test]
    fn the_checker_finds_a_non_strict_schema() {
        let loose = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(strict_violations(&loose).len(), 2);
    }
}
