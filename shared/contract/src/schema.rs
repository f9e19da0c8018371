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
    collapse_const_union(schema);
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
            collapse_const_union(property);
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

/// A Rust enum of documented unit variants comes out of `schemars` as a
/// `oneOf` of string constants, which strict mode does not accept. It is
/// rewritten as a plain string `enum`, and the variants' descriptions are
/// appended to the schema's own (`PCS = Pieces; BOX = Box`).
fn collapse_const_union(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    merge_nullable_enum(map);
    let Some(Value::Array(options)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::with_capacity(options.len());
    let mut notes = Vec::new();
    for option in options {
        match option.get("const") {
            Some(Value::String(value)) if option.get("type").is_none_or(|t| t == "string") => {
                values.push(Value::String(value.clone()));
                if let Some(Value::String(note)) = option.get("description") {
                    notes.push(format!("{value} = {}", note.trim_end_matches('.')));
                }
            }
            _ => return,
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), json!("string"));
    map.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let listed = format!("{}.", notes.join("; "));
        let description = match map.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own} {listed}"),
            None => listed,
        };
        map.insert("description".into(), Value::String(description));
    }
}

/// `Option<Enum>` comes out as `anyOf: [<enum>, {"type": "null"}]`; it is
/// written as one nullable enum (`type: ["string", "null"]`, `null` in `enum`).
fn merge_nullable_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(options)) = map.get_mut("anyOf") else {
        return;
    };
    if options.len() != 2 || !options.iter().any(is_null_schema) {
        return;
    }
    let Some(inner) = options.iter_mut().find(|o| !is_null_schema(o)) else {
        return;
    };
    let mut inner = inner.clone();
    // The field's own description wins over the type's, as it does for a
    // required field.
    if map.contains_key("description")
        && let Value::Object(inner) = &mut inner
    {
        inner.remove("description");
    }
    collapse_const_union(&mut inner);
    let Value::Object(inner) = inner else {
        return;
    };
    if inner.get("type") != Some(&json!("string")) || !inner.get("enum").is_some_and(Value::is_array) {
        return;
    }
    map.remove("anyOf");
    let outer = map.get("description").and_then(Value::as_str).map(str::to_owned);
    for (key, value) in inner {
        map.insert(key, value);
    }
    if let (Some(outer), Some(listed)) = (&outer, map.get("description").and_then(Value::as_str)) {
        let description = format!("{outer} {listed}");
        map.insert("description".into(), Value::String(description));
    } else if let Some(outer) = outer {
        map.insert("description".into(), Value::String(outer));
    }
    let mut merged = Value::Object(std::mem::take(map));
    make_nullable(&mut merged);
    if let Value::Object(merged) = merged {
        *map = merged;
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

    /// How a thing is counted.
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Unit {
        /// Pieces.
        #[serde(rename = "PCS")]
        Pcs,
        /// Box of 24.
        #[serde(rename = "BOX")]
        Box,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct WithUnits {
        /// The unit.
        unit: Unit,
        /// A unit or null.
        maybe: Option<Unit>,
        units: Vec<Unit>,
    }

    #[test]
    fn documented_enums_become_plain_enums_with_their_docs() {
        let schema = strict_schema_for::<WithUnits>();
        let unit = &schema["properties"]["unit"];
        assert_eq!(unit["type"], json!("string"));
        assert_eq!(unit["enum"], json!(["PCS", "BOX"]));
        assert_eq!(unit["description"], json!("The unit. PCS = Pieces; BOX = Box of 24."));
        assert!(unit.get("oneOf").is_none());
        let maybe = &schema["properties"]["maybe"];
        assert_eq!(maybe["type"], json!(["string", "null"]));
        assert_eq!(maybe["enum"], json!(["PCS", "BOX", null]));
        assert_eq!(
            maybe["description"],
            json!("A unit or null. PCS = Pieces; BOX = Box of 24.")
        );
        assert_eq!(schema["properties"]["units"]["items"]["enum"], json!(["PCS", "BOX"]));
        assert!(!schema.to_string().contains("oneOf"), "{schema}");
    }

    #[test]
    fn the_checker_finds_a_non_strict_schema() {
        let loose = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(strict_violations(&loose).len(), 2);
    }
}
