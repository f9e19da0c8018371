//! The deployment template (`infra/aws/template.json`) as CloudFormation
//! sees it: its `Fn::ForEach` loops expanded the way the
//! `AWS::LanguageExtensions` transform (and cfn-lint) expands them, and each
//! deployed function with its role's statements. The template's own checks
//! (`infra/tests/template.rs`) and the check of its grants against the
//! DynamoDB actions the black-box suite recorded (`tests/api/grants.rs`)
//! read it through here. A template this cannot read is an error that says
//! where.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value, json};

/// What went wrong reading the template.
pub type Error = String;

/// The template at `path`, its loops expanded.
pub fn read(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let raw: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
    if raw.get("Transform") != Some(&json!("AWS::LanguageExtensions")) {
        return Err("the template uses Fn::ForEach, which needs the AWS::LanguageExtensions transform".into());
    }
    expand(&raw, &[])
}

/// The template's `Resources`.
pub fn resources(template: &Value) -> Result<&Map<String, Value>, Error> {
    template
        .get("Resources")
        .and_then(Value::as_object)
        .ok_or_else(|| "the template has no Resources object".to_owned())
}

/// The resources of type `kind`, by logical id.
pub fn of_type<'a>(template: &'a Value, kind: &str) -> Result<Vec<(&'a String, &'a Value)>, Error> {
    Ok(resources(template)?
        .iter()
        .filter(|(_, resource)| resource.get("Type") == Some(&json!(kind)))
        .collect())
}

/// A resource's `Properties` (`what` names it in the error).
pub fn props<'a>(resource: &'a Value, what: &str) -> Result<&'a Value, Error> {
    resource
        .get("Properties")
        .filter(|p| p.is_object())
        .ok_or_else(|| format!("{what} has no Properties"))
}

// ------------------------------------------------- Fn::ForEach expansion

/// Replaces `${id}` with the value and `&{id}` with the value stripped of
/// non-alphanumeric characters, as the transform does.
pub fn substitute(text: &str, bindings: &[(String, String)]) -> String {
    bindings.iter().fold(text.to_owned(), |acc, (id, value)| {
        let alphanumeric: String = value.chars().filter(char::is_ascii_alphanumeric).collect();
        acc.replace(&format!("${{{id}}}"), value)
            .replace(&format!("&{{{id}}}"), &alphanumeric)
    })
}

/// Expands `Fn::ForEach::*` keys. Identifiers are replaced in keys, in
/// `Fn::Sub` strings and in `{"Ref": identifier}`, the places the transform
/// (and cfn-lint's implementation of it) replaces them.
pub fn expand(value: &Value, bindings: &[(String, String)]) -> Result<Value, Error> {
    Ok(match value {
        Value::Object(object) => {
            if let (1, Some(Value::String(name))) = (object.len(), object.get("Ref"))
                && let Some((_, bound)) = bindings.iter().find(|(id, _)| id == name)
            {
                return Ok(Value::String(bound.clone()));
            }
            let mut out = Map::new();
            for (key, inner) in object {
                if key.starts_with("Fn::ForEach::") {
                    for (k, v) in expand_loop(key, inner, bindings)? {
                        if out.contains_key(&k) {
                            return Err(format!("{key} produces {k} twice"));
                        }
                        out.insert(k, v);
                    }
                } else if key == "Fn::Sub" {
                    let sub = match inner {
                        Value::String(s) => Value::String(substitute(s, bindings)),
                        Value::Array(parts) => Value::Array(
                            parts
                                .iter()
                                .enumerate()
                                .map(|(i, part)| match (i, part) {
                                    (0, Value::String(s)) => Ok(Value::String(substitute(s, bindings))),
                                    _ => expand(part, bindings),
                                })
                                .collect::<Result<_, _>>()?,
                        ),
                        other => expand(other, bindings)?,
                    };
                    out.insert(key.clone(), sub);
                } else {
                    let k = substitute(key, bindings);
                    if out.contains_key(&k) {
                        return Err(format!("{k} appears twice after expansion"));
                    }
                    out.insert(k, expand(inner, bindings)?);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| expand(v, bindings)).collect::<Result<_, _>>()?),
        other => other.clone(),
    })
}

fn expand_loop(name: &str, args: &Value, bindings: &[(String, String)]) -> Result<Map<String, Value>, Error> {
    let (identifier, collection, fragment) = match args.as_array().map(Vec::as_slice) {
        Some([Value::String(id), Value::Array(items), fragment @ Value::Object(_)]) => (id, items, fragment),
        _ => return Err(format!("{name} must be [identifier, [literal values], {{fragment}}]")),
    };
    let mut out = Map::new();
    for item in collection {
        let Value::String(item) = item else {
            return Err(format!("{name}: collection values must be literal strings, got {item}"));
        };
        let mut inner = bindings.to_vec();
        inner.push((identifier.clone(), item.clone()));
        if let Value::Object(expanded) = expand(fragment, &inner)? {
            for (k, v) in expanded {
                if out.contains_key(&k) {
                    return Err(format!("{name} produces {k} twice"));
                }
                out.insert(k, v);
            }
        }
    }
    Ok(out)
}

// ------------------------------------------------------- value helpers

/// The logical id named by `"Name"` or `{"Fn::Sub": "Name"}` (a loop output).
pub fn logical_id(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("Fn::Sub").and_then(Value::as_str),
        _ => None,
    }
}

/// `(logical id, attribute)` of an `Fn::GetAtt`.
pub fn get_att(value: &Value) -> Option<(&str, &str)> {
    match value.get("Fn::GetAtt")?.as_array()?.as_slice() {
        [id, Value::String(attribute)] => Some((logical_id(id)?, attribute)),
        _ => None,
    }
}

/// The text of a plain string or of an `Fn::Sub` (its template string).
pub fn sub_text(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Object(o) => match o.get("Fn::Sub")? {
            Value::String(s) => Some(s),
            Value::Array(parts) => parts.first()?.as_str(),
            _ => None,
        },
        _ => None,
    }
}

/// A value that may be one or a list of them, as a list.
pub fn strings(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

// ------------------------------------------------------ the functions

/// One deployed function as the template defines it.
#[derive(Debug)]
pub struct Function {
    /// Its logical id (`FnInventoryGetStock`).
    pub logical_id: String,
    /// Its name: the `api/*.rs` file it runs (`inventory_get_stock`).
    pub name: String,
    /// Its `Properties`.
    pub properties: Value,
    /// The statements of its role's inline policies.
    pub statements: Vec<Value>,
    /// Its role's `Properties`.
    pub role: Value,
}

impl Function {
    /// The DynamoDB actions its role grants for its code's requests
    /// (`dynamodb:GetItem`, ...): the [`STREAM_ACTIONS`] aside.
    pub fn dynamodb_actions(&self) -> Result<BTreeSet<String>, Error> {
        self.actions_where(|a| a.starts_with("dynamodb:") && !STREAM_ACTIONS.contains(&a))
    }

    /// The [`STREAM_ACTIONS`] its role grants.
    pub fn stream_actions(&self) -> Result<BTreeSet<String>, Error> {
        self.actions_where(|a| STREAM_ACTIONS.contains(&a))
    }

    /// The actions its role grants that `keep` keeps.
    fn actions_where(&self, keep: impl Fn(&str) -> bool) -> Result<BTreeSet<String>, Error> {
        let mut out = BTreeSet::new();
        for statement in &self.statements {
            out.extend(actions_of(statement)?.into_iter().filter(|a| keep(a)));
        }
        Ok(out)
    }
}

/// The actions with which Lambda's event source mapping reads the table's
/// stream, under the role of the function it invokes (`notify`): no code
/// of draftline sends them, so no call's evidence shows them.
pub const STREAM_ACTIONS: [&str; 4] = [
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:ListStreams",
];

impl Function {
    /// The statements of its role that allow a DynamoDB action: what a
    /// role of a `Fn::ForEach` loop shares with its siblings (their log
    /// statements name each function's own log group).
    pub fn dynamodb_statements(&self) -> Vec<&Value> {
        self.statements
            .iter()
            .filter(|statement| {
                actions_of(statement)
                    .unwrap_or_default()
                    .iter()
                    .any(|a| a.starts_with("dynamodb:"))
            })
            .collect()
    }

    /// The partition-key patterns its role allows `action` on: `None` when
    /// an `Allow` statement grants it with no condition (every key), else
    /// the `dynamodb:LeadingKeys` patterns (`*` any run of characters, `?`
    /// one) of the statements that grant it under `ForAllValues:StringLike`
    /// (empty: none grants it). Any other condition is an error.
    pub fn leading_keys(&self, action: &str) -> Result<Option<Vec<String>>, Error> {
        let mut patterns = Vec::new();
        for statement in &self.statements {
            if statement.get("Effect") != Some(&json!("Allow")) || !actions_of(statement)?.iter().any(|a| a == action) {
                continue;
            }
            let Some(condition) = statement.get("Condition") else {
                return Ok(None);
            };
            let listed = condition
                .as_object()
                .filter(|object| object.len() == 1)
                .and_then(|_| condition.pointer("/ForAllValues:StringLike/dynamodb:LeadingKeys"))
                .ok_or_else(|| {
                    format!(
                        "{}: a statement granting {action} has a condition other than \
                         ForAllValues:StringLike on dynamodb:LeadingKeys",
                        self.logical_id
                    )
                })?;
            for pattern in strings(listed) {
                patterns.push(
                    sub_text(pattern)
                        .ok_or_else(|| format!("{}: a LeadingKeys pattern must be a string", self.logical_id))?
                        .to_owned(),
                );
            }
        }
        Ok(Some(patterns))
    }
}

/// IAM's `StringLike`: `*` matches any run of characters, `?` one.
pub fn string_like(pattern: &str, value: &str) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some(('?', rest)) => !s.is_empty() && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    let (p, s): (Vec<char>, Vec<char>) = (pattern.chars().collect(), value.chars().collect());
    go(&p, &s)
}

/// The actions of one statement.
pub fn actions_of(statement: &Value) -> Result<Vec<String>, Error> {
    statement
        .get("Action")
        .map(strings)
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            a.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("an Action must be a literal string, got {a}"))
        })
        .collect()
}

/// The template's functions, by name.
pub fn functions(template: &Value) -> Result<BTreeMap<String, Function>, Error> {
    let mut out = BTreeMap::new();
    for (id, resource) in of_type(template, "AWS::Lambda::Function")? {
        let properties = props(resource, id)?.clone();
        let function_name = properties
            .get("FunctionName")
            .and_then(sub_text)
            .ok_or_else(|| format!("{id}: FunctionName must be a string or Fn::Sub"))?;
        let name = function_name
            .strip_prefix("${AWS::StackName}-")
            .ok_or_else(|| format!("{id}: FunctionName must be ${{AWS::StackName}}-<api file>, is {function_name}"))?
            .to_owned();
        let (role_id, attribute) = properties
            .get("Role")
            .and_then(get_att)
            .ok_or_else(|| format!("{id}: Role must be Fn::GetAtt of a role in this template"))?;
        if attribute != "Arn" {
            return Err(format!("{id}: Role must be the role's Arn"));
        }
        let role_resource = resources(template)?
            .get(role_id)
            .ok_or_else(|| format!("{id}: role {role_id} is not in the template"))?;
        if role_resource.get("Type") != Some(&json!("AWS::IAM::Role")) {
            return Err(format!("{role_id} is not an AWS::IAM::Role"));
        }
        let role = props(role_resource, role_id)?.clone();
        let mut statements = Vec::new();
        for policy in role
            .get("Policies")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{role_id}: inline Policies expected"))?
        {
            statements.extend(
                policy
                    .pointer("/PolicyDocument/Statement")
                    .and_then(Value::as_array)
                    .cloned()
                    .ok_or_else(|| format!("{role_id}: a policy without a Statement list"))?,
            );
        }
        let function = Function {
            logical_id: id.clone(),
            name: name.clone(),
            properties,
            statements,
            role,
        };
        if out.insert(name, function).is_some() {
            return Err(format!("two functions are named {id}"));
        }
    }
    if out.is_empty() {
        return Err("the template defines no function".into());
    }
    Ok(out)
}

// ---------------------------------------------------------- the tiers

/// What a deployed function may do, decided by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// A read tool: reads, the `PutItem` of its audit item, and the
    /// `UpdateItem` of a rate counter (on the rate counters' keys only).
    Read,
    /// A draft tool (`*_draft`): reads and one `TransactWriteItems`; a
    /// release of its key and a consumed confirmation delete.
    Draft,
    /// `mcp` and `tools`, the endpoints of every tool: `mcp` calls them
    /// (every tool's permissions), `tools` lists them (no table access).
    Endpoint,
    /// `oauth_protected_resource`: metadata, no table access.
    Metadata,
    /// `review`: the review pages read, and record a decision with puts in
    /// one transaction.
    Pages,
    /// `notify`: the outbox's delivery, on the table's stream and a
    /// schedule: reads settings, queries the due index, writes deliveries.
    Notify,
}

impl Tier {
    /// The tier of function `function`.
    pub fn of(function: &str) -> Self {
        match function {
            "mcp" | "tools" => Self::Endpoint,
            "oauth_protected_resource" => Self::Metadata,
            "review" => Self::Pages,
            "notify" => Self::Notify,
            f if f.ends_with("_draft") => Self::Draft,
            _ => Self::Read,
        }
    }

    /// The DynamoDB actions a function of this tier may be granted, and
    /// no other. `TransactWriteItems` is authorised per item: `Put` →
    /// `PutItem`, `Update` → `UpdateItem`, `Delete` → `DeleteItem`
    /// (draftline sends no `ConditionCheck`, so no tier lists
    /// `ConditionCheckItem`).
    pub fn actions(self) -> BTreeSet<String> {
        let list: &[&str] = match self {
            Self::Read => &READ_ACTIONS,
            Self::Draft | Self::Endpoint => &DRAFT_ACTIONS,
            Self::Pages => &PAGES_ACTIONS,
            Self::Notify => &NOTIFY_ACTIONS,
            Self::Metadata => &[],
        };
        list.iter().map(|s| (*s).to_owned()).collect()
    }
}

/// A read tool's grants.
pub const READ_ACTIONS: [&str; 5] = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
];
/// A draft tool's grants (and so `mcp`'s).
pub const DRAFT_ACTIONS: [&str; 6] = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
];
/// The review pages' grants (`UpdateItem` on the near-duplicate markers
/// only: a decision takes its draft off its marker).
pub const PAGES_ACTIONS: [&str; 5] = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
];

/// The notify function's grants (besides [`STREAM_ACTIONS`]): `GetItem`
/// of the settings, `Query` of the due index, `PutItem` and `UpdateItem`
/// in the outbox (a fan-out's transaction, a claim, a mark; on Tryton the
/// poll's events and watermark).
pub const NOTIFY_ACTIONS: [&str; 4] = [
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
];

#[cfg(test)]
mod tests {
    use super::string_like;

    #[test]
    fn string_like_matches_as_iam_does() {
        assert!(string_like(
            "T#*#LIMIT#RATE#*",
            "T#demo#LIMIT#RATE#buyer-sby#inventory_get_stock"
        ));
        assert!(string_like("T#*#BUDGET#*", "T#demo#BUDGET#buyer-sby"));
        assert!(!string_like("T#*#LIMIT#RATE#*", "T#demo#LIMIT#RUN#SBY-01#buyer-sby#r"));
        assert!(!string_like("T#*#LIMIT#RATE#*", "T#demo#IDEM#k"));
        assert!(string_like("T#*#B#*#NEAR#*", "T#demo#B#SBY-01#NEAR#PO#V-00231"));
        assert!(!string_like("T#*#B#*#NEAR#*", "T#demo#B#SBY-01#PO"));
        assert!(string_like("a?c", "abc") && !string_like("a?c", "ac"));
    }
}
