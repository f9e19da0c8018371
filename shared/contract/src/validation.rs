//! Input parsing and validation: bytes in, a valid typed input or a
//! VALIDATION_ERROR whose `details` locate every problem by JSON path.
//!
//! Shape errors come from `serde` (unknown fields are refused by
//! `deny_unknown_fields`, unknown enum values list the allowed ones) with the
//! path tracked by `serde_path_to_error`; value rules come from `validator`.

use serde::de::DeserializeOwned;
use validator::{Validate, ValidationError, ValidationErrors, ValidationErrorsKind};

use crate::error::{FieldIssue, ToolError};

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The error for `issues`; the summary ends with `not_happened` ("No draft was created.").
pub fn rejected_with(issues: Vec<FieldIssue>, not_happened: &str) -> ToolError {
    let summary = match issues.as_slice() {
        [] => "The input is invalid.".to_owned(),
        [one] => format!("Invalid input at {}: {}", display_path(&one.path), one.message),
        [first, rest @ ..] => format!(
            "Invalid input at {}: {} (and {} more problem{}; see details)",
            display_path(&first.path),
            first.message,
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    };
    // Issue messages may or may not end with a full stop; the summary always does.
    let stop = if summary.ends_with(['.', ')']) { "" } else { "." };
    ToolError::invalid_fields(
        format!("{summary}{stop} {not_happened} Fix the input and call again."),
        issues,
    )
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "the top level" } else { path }
}

/// Deserializes `body` strictly and runs the validator rules.
pub fn parse_and_validate<T: DeserializeOwned + Validate>(body: &[u8]) -> Result<T, Vec<FieldIssue>> {
    if body.len() > MAX_BODY_BYTES {
        return Err(vec![FieldIssue::schema(
            "",
            format!(
                "the request body is {} bytes; the limit is {MAX_BODY_BYTES} bytes. Send fewer lines per call",
                body.len()
            ),
        )]);
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(vec![FieldIssue::schema(
            "",
            "the request body is empty; send a JSON object matching the tool's input schema",
        )]);
    }
    // serde would accept a struct written as an array; the contract says object.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| *b != b'{') && serde_json::from_slice::<serde_json::Value>(body).is_ok() {
        return Err(vec![FieldIssue::schema(
            "",
            "the request body must be a JSON object matching the tool's input schema",
        )]);
    }
    let input: T = match deserialize(body) {
        Ok(input) => input,
        // JSON Schema counts 13.0 as an integer; serde does not. Only a body
        // that fails goes the slower way through a normalised value.
        Err(issues) => {
            let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(body) else {
                return Err(issues);
            };
            if !integral_floats_to_integers(&mut value) {
                return Err(issues);
            }
            serde_path_to_error::deserialize(value).map_err(|e| vec![shape_issue(path_of(&e), e.inner())])?
        }
    };
    input.validate().map_err(|errors| {
        let mut issues = Vec::new();
        flatten("", &errors, &mut issues);
        issues
    })?;
    Ok(input)
}

fn path_of<E>(e: &serde_path_to_error::Error<E>) -> String {
    match e.path().to_string().as_str() {
        "." => String::new(),
        p => p.to_owned(),
    }
}

fn deserialize<T: DeserializeOwned>(body: &[u8]) -> Result<T, Vec<FieldIssue>> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let input: T = serde_path_to_error::deserialize(&mut de).map_err(|e| vec![shape_issue(path_of(&e), e.inner())])?;
    de.end().map_err(|e| {
        vec![FieldIssue::schema(
            "",
            format!("the request body is not valid JSON: {e}"),
        )]
    })?;
    Ok(input)
}

/// Rewrites every number with a zero fraction (`13.0`, `1e2`) that fits an
/// `i64` as that integer; `true` if anything changed.
fn integral_floats_to_integers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                // Below 2^53 every whole f64 is exact, so the cast is too.
                #[allow(clippy::cast_possible_truncation)]
                let whole = f as i64;
                *value = Value::from(whole);
                true
            }
            _ => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| integral_floats_to_integers(item) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, item| integral_floats_to_integers(item) | changed),
        _ => false,
    }
}

fn join(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_owned()
    } else {
        format!("{parent}.{field}")
    }
}

/// Turns a serde error into a located, model-readable issue.
fn shape_issue(path: String, err: &serde_json::Error) -> FieldIssue {
    use serde_json::error::Category;
    let text = err.to_string();
    // serde's text ends with " at line L column C"; the path says where.
    let text = text.split(" at line ").next().unwrap_or(&text).to_owned();
    match err.classify() {
        // A syntax error is about the body as a whole, wherever the parser stopped.
        Category::Syntax | Category::Eof => {
            FieldIssue::schema("", format!("the request body is not valid JSON ({err})"))
        }
        Category::Io => FieldIssue::schema(path, "the request body could not be read"),
        Category::Data => {
            let field = |prefix: &str| {
                text.strip_prefix(prefix)
                    .and_then(|rest| rest.split('`').next())
                    .map(str::to_owned)
            };
            if let Some(name) = field("missing field `") {
                return FieldIssue::schema(join(&path, &name), format!("`{name}` is required"));
            }
            if let Some(name) = field("unknown field `") {
                let located = if path.ends_with(&name) {
                    path
                } else {
                    join(&path, &name)
                };
                let allowed = text.split("expected ").nth(1).unwrap_or("no other fields");
                return FieldIssue::schema(
                    located,
                    format!("`{name}` is not a field of this input; allowed fields: {allowed}"),
                );
            }
            FieldIssue::schema(path, readable_type_error(&text))
        }
    }
}

/// Replaces Rust type names in serde's text with JSON words.
fn readable_type_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut words = text.split(' ').peekable();
    while let Some(word) = words.next() {
        if word == "struct" {
            // "expected struct PoLine" -> "expected a JSON object"
            out.push_str("a JSON object");
            words.next();
        } else if word.starts_with("u32") || word.starts_with("u64") || word.starts_with("i64") {
            out.push_str("an integer");
        } else {
            out.push_str(word);
        }
        if words.peek().is_some() {
            out.push(' ');
        }
    }
    out
}

fn flatten(prefix: &str, errors: &ValidationErrors, out: &mut Vec<FieldIssue>) {
    let mut fields: Vec<_> = errors.errors().iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    for (field, kind) in fields {
        let path = if field == "__all__" {
            prefix.to_owned()
        } else {
            join(prefix, field)
        };
        match kind {
            ValidationErrorsKind::Field(list) => {
                out.extend(list.iter().map(|e| FieldIssue::schema(path.clone(), describe(e))));
            }
            ValidationErrorsKind::Struct(inner) => flatten(&path, inner, out),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    flatten(&format!("{path}[{index}]"), inner, out);
                }
            }
        }
    }
}

fn describe(error: &ValidationError) -> String {
    if let Some(message) = &error.message {
        return message.to_string();
    }
    let param = |name: &str| error.params.get(name).map(|v| v.to_string());
    match error.code.as_ref() {
        "length" => {
            let unit = match error.params.get("value") {
                Some(serde_json::Value::Array(_)) => "entries",
                _ => "characters",
            };
            match (param("min"), param("max"), param("equal")) {
                (_, _, Some(eq)) => format!("must have exactly {eq} {unit}"),
                (Some(min), Some(max), _) => format!("must have {min} to {max} {unit}"),
                (Some(min), None, _) => format!("must have at least {min} {unit}"),
                (None, Some(max), _) => format!("must have at most {max} {unit}"),
                _ => "has the wrong length".to_owned(),
            }
        }
        "range" => match (param("min"), param("max")) {
            (Some(min), Some(max)) => format!("must be between {min} and {max}"),
            (Some(min), None) => format!("must be at least {min}"),
            (None, Some(max)) => format!("must be at most {max}"),
            _ => "is out of range".to_owned(),
        },
        "regex" => "contains characters that are not allowed".to_owned(),
        other => format!("is invalid ({other})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Deserialize, Serialize, Validate)]
    #[serde(deny_unknown_fields)]
    struct Line {
        #[validate(range(min = 1, max = 1000))]
        qty: i64,
        uom: Uom,
    }

    #[derive(Debug, Deserialize, Serialize)]
    enum Uom {
        #[serde(rename = "PCS")]
        Pcs,
        #[serde(rename = "BOX")]
        Box,
    }

    #[derive(Debug, Deserialize, Validate)]
    #[serde(deny_unknown_fields)]
    struct Input {
        #[validate(length(min = 1, max = 8))]
        code: String,
        #[validate(length(min = 1), nested)]
        lines: Vec<Line>,
    }

    fn issues(body: &str) -> Vec<FieldIssue> {
        match parse_and_validate::<Input>(body.as_bytes()) {
            Err(details) => details,
            Ok(input) => panic!("expected a validation error, got {input:?}"),
        }
    }

    #[test]
    fn a_wrong_enum_value_is_located_and_lists_the_allowed_values() {
        let found = issues(r#"{"code":"A","lines":[{"qty":1,"uom":"PCS"},{"qty":1,"uom":"KG"}]}"#);
        assert_eq!(found[0].path, "lines[1].uom");
        assert!(
            found[0].message.contains("PCS") && found[0].message.contains("BOX"),
            "{found:?}"
        );
    }

    #[test]
    fn unknown_and_missing_fields_name_the_field() {
        let found = issues(r#"{"code":"A","lines":[],"tenant":"x"}"#);
        assert_eq!(found[0].path, "tenant");
        let found = issues(r#"{"lines":[]}"#);
        assert_eq!(found[0].path, "code");
        assert_eq!(found[0].message, "`code` is required");
    }

    #[test]
    fn validator_rules_are_located_inside_lists() {
        let found = issues(r#"{"code":"ABCDEFGHIJ","lines":[{"qty":1,"uom":"PCS"},{"qty":-5,"uom":"BOX"}]}"#);
        let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["code", "lines[1].qty"]);
        assert_eq!(found[1].message, "must be between 1 and 1000");
    }

    #[test]
    fn malformed_json_and_type_errors_are_clear() {
        assert!(
            issues("{\"code\":")
                .iter()
                .any(|i| i.message.contains("not valid JSON"))
        );
        let found = issues("[1,2]");
        assert!(!found[0].message.contains("struct"), "{found:?}");
        assert!(issues("").iter().any(|i| i.message.contains("empty")));
    }
}

/// Dates exactly as RFC 3339 `full-date` (`YYYY-MM-DD`, what the schemas'
/// `format: date` promises). chrono alone also accepts `2026-1-5`,
/// `+2026-01-05` and surrounding spaces; a schema-following client never
/// sends those, so the server does not accept them either.
pub mod date {
    use chrono::NaiveDate;
    use serde::{Deserialize, Deserializer};

    fn parse<E: serde::de::Error>(text: &str) -> Result<NaiveDate, E> {
        let b = text.as_bytes();
        let shaped = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !shaped {
            return Err(E::custom(format!(
                "'{}' is not a date: dates are written YYYY-MM-DD, e.g. 2026-12-15",
                text.chars().take(40).collect::<String>()
            )));
        }
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map_err(|_| E::custom(format!("{text} is not a day of the calendar")))
    }

    /// A `YYYY-MM-DD` date.
    pub fn strict<'de, D: Deserializer<'de>>(deserializer: D) -> Result<NaiveDate, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse(&text)
    }

    /// A `YYYY-MM-DD` date or `null` (use with `#[serde(default)]`).
    pub fn strict_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<NaiveDate>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| parse(&text))
            .transpose()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn only_yyyy_mm_dd_is_a_date() {
            let read = |text: &str| {
                let mut de = serde_json::Deserializer::from_str(text);
                strict(&mut de).ok()
            };
            assert_eq!(read("\"2026-01-05\""), NaiveDate::from_ymd_opt(2026, 1, 5));
            for bad in [
                "\"2026-1-5\"",
                "\"+2026-01-05\"",
                "\" 2026-01-05\"",
                "\"2026-02-30\"",
                "\"20260105\"",
                "5",
            ] {
                assert_eq!(read(bad), None, "{bad}");
            }
        }
    }
}

#[cfg(test)]
mod integer_tests {
    use super::*;

    #[derive(serde::Deserialize, validator::Validate)]
    #[serde(deny_unknown_fields)]
    struct Line {
        qty: i64,
        limit: Option<u32>,
    }

    #[test]
    fn a_whole_number_written_with_a_fraction_is_an_integer_as_json_schema_says() {
        let line: Line = parse_and_validate(br#"{"qty": 13.0, "limit": 2e1}"#).unwrap();
        assert_eq!((line.qty, line.limit), (13, Some(20)));
        let issues = parse_and_validate::<Line>(br#"{"qty": 13.5, "limit": null}"#)
            .err()
            .unwrap();
        assert_eq!(issues[0].path, "qty");
    }
}
