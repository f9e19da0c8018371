//! Does a JSON value conform to a published strict schema ([`crate::schema`])?
//! Every problem, each with its JSON path, rather than the first one serde
//! meets: a person who fixes a file (a tenant's policy) sees all of them at
//! once.
//!
//! It knows the keywords the strict schemas of this crate are made of
//! (`type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties: false`, `items`, `anyOf`, `minimum`, `maximum`,
//! `minLength`, `maxLength`, `minItems`, `maxItems`); `pattern` and
//! `format` are left to the typed rules that follow, which own the text of
//! those messages.

use serde_json::{Map, Value};

use crate::error::FieldIssue;

/// The problems of `value` against `schema`, in document order; empty when it conforms.
pub fn issues(value: &Value, schema: &Value) -> Vec<FieldIssue> {
    let mut out = Vec::new();
    check(value, schema, "", &mut out);
    out
}

fn join(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_owned()
    } else {
        format!("{parent}.{field}")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(value: &Value, wanted: &str) -> bool {
    let actual = type_name(value);
    actual == wanted || (wanted == "number" && actual == "integer")
}

fn check(value: &Value, schema: &Value, path: &str, out: &mut Vec<FieldIssue>) {
    let Value::Object(schema) = schema else {
        return;
    };
    if let Some(Value::Array(options)) = schema.get("anyOf") {
        // The first option that conforms wins; if none does, the problems of
        // the option of the value's own type are the useful ones.
        let mut best: Option<Vec<FieldIssue>> = None;
        for option in options {
            let mut found = Vec::new();
            check(value, option, path, &mut found);
            if found.is_empty() {
                return;
            }
            let typed = option
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| is_type(value, t));
            if best.is_none() || typed {
                best = Some(found);
            }
        }
        out.extend(best.unwrap_or_default());
        return;
    }
    if let Some(wanted) = schema.get("type") {
        let names: Vec<&str> = match wanted {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|t| is_type(value, t)) {
            out.push(FieldIssue::schema(
                path,
                format!("expected {}, found {}", names.join(" or "), type_name(value)),
            ));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        out.push(FieldIssue::schema(
            path,
            format!("{value} is not allowed; allowed: {}", listed.join(", ")),
        ));
        return;
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        out.push(FieldIssue::schema(path, format!("must be {constant}")));
        return;
    }
    match value {
        Value::Object(object) => check_object(object, schema, path, out),
        Value::Array(items) => {
            bounds(schema, "minItems", "maxItems", items.len(), "items", path, out);
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{path}[{i}]"), out);
                }
            }
        }
        Value::String(text) => {
            bounds(
                schema,
                "minLength",
                "maxLength",
                text.chars().count(),
                "characters",
                path,
                out,
            );
        }
        Value::Number(number) => {
            let n = number.as_f64().unwrap_or_default();
            let low = schema.get("minimum").and_then(Value::as_f64);
            let high = schema.get("maximum").and_then(Value::as_f64);
            if low.is_some_and(|low| n < low) || high.is_some_and(|high| n > high) {
                let range = match (low, high) {
                    (Some(low), Some(high)) => format!("between {low} and {high}"),
                    (Some(low), None) => format!("at least {low}"),
                    (None, Some(high)) => format!("at most {high}"),
                    (None, None) => String::new(),
                };
                out.push(FieldIssue::schema(path, format!("{number} is out of range: {range}")));
            }
        }
        _ => {}
    }
}

fn check_object(object: &Map<String, Value>, schema: &Map<String, Value>, path: &str, out: &mut Vec<FieldIssue>) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            // Strict schemas list optional properties as required and
            // nullable: a missing one reads as null, as serde reads it.
            let nullable = properties
                .and_then(|p| p.get(name))
                .is_some_and(|p| issues(&Value::Null, p).is_empty());
            if !object.contains_key(name) && !nullable {
                out.push(FieldIssue::schema(join(path, name), "is required"));
            }
        }
    }
    for (name, item) in object {
        match properties.and_then(|p| p.get(name)) {
            Some(property) => check(item, property, &join(path, name), out),
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                out.push(FieldIssue::schema(
                    join(path, name),
                    format!("unknown field; allowed here: {}", known.join(", ")),
                ));
            }
            None => {
                if let Some(extra) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                    check(item, extra, &join(path, name), out);
                }
            }
        }
    }
}

fn bounds(
    schema: &Map<String, Value>,
    min: &str,
    max: &str,
    count: usize,
    unit: &str,
    path: &str,
    out: &mut Vec<FieldIssue>,
) {
    let low = schema.get(min).and_then(Value::as_u64);
    let high = schema.get(max).and_then(Value::as_u64);
    let count = count as u64;
    if low.is_some_and(|low| count < low) {
        out.push(FieldIssue::schema(
            path,
            format!("has {count} {unit}; at least {} needed", low.unwrap_or_default()),
        ));
    }
    if high.is_some_and(|high| count > high) {
        out.push(FieldIssue::schema(
            path,
            format!("has {count} {unit}; at most {} allowed", high.unwrap_or_default()),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_problem_is_found_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["enforce", "observe"]},
                "count": {"type": ["integer", "null"], "minimum": 0, "maximum": 10},
                "lines": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"code": {"type": "string", "maxLength": 3}},
                    "required": ["code"],
                    "additionalProperties": false
                }}
            },
            "required": ["mode", "count", "lines"],
            "additionalProperties": false
        });
        let found = issues(
            &json!({"mode": "loud", "count": 11, "lines": [{"code": "ABCD"}, {"kode": "A"}], "extra": 1}),
            &schema,
        );
        let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "mode",
                "count",
                "lines[0].code",
                "lines[1].code",
                "lines[1].kode",
                "extra"
            ]
        );
        assert!(issues(&json!({"mode": "observe", "lines": []}), &schema).is_empty());
    }
}
