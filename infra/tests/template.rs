//! The deployment templates, checked against the one table definition and
//! against the functions in `api/`.
//!
//! - `infra/aws/template.json` (CloudFormation with the
//!   `AWS::LanguageExtensions` transform): the table equals
//!   `infra/dynamodb/table.json`, the functions are least-privilege, and every
//!   `api/*.rs` is deployed and routed.
//! - `vercel.json`: every `api/*.rs` gets function settings, the RFC 9728
//!   metadata paths and every review page are rewritten, no legacy runtime string.
//!
//! The template's `Fn::ForEach` loops are expanded the way the transform
//! (and cfn-lint) expands them (`draftline_infra::template`), so the checks
//! see the resources that CloudFormation would create. Whether each role
//! grants what its function's calls need is checked from evidence, in
//! `tests/api/grants.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use draftline_infra::TableDefinition;
use draftline_infra::template::{self, Function, Tier, get_att, strings, sub_text};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------- fixtures

/// The repository's root, from this package's manifest directory as `cargo
/// test` names it when it runs the test (a binary reused from a build in
/// another clone, through a shared `CARGO_TARGET_DIR`, would name that one).
fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("..")
}

fn read_json(relative: &str) -> Value {
    let path = repo_root().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not valid JSON: {e}"))
}

/// The names of the deployed functions in the repository: one per `api/*.rs`.
fn api_functions() -> BTreeSet<String> {
    let dir = repo_root().join("api");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    let names: BTreeSet<String> = entries
        .map(|entry| entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())))
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter_map(|path| path.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
        .collect();
    assert!(!names.is_empty(), "no api/*.rs found in {}", dir.display());
    names
}

/// The template with its `Fn::ForEach` loops expanded.
fn template() -> Value {
    template::read(&repo_root().join("infra/aws/template.json")).unwrap_or_else(|e| panic!("{e}"))
}

fn resources(template: &Value) -> &Map<String, Value> {
    template::resources(template).unwrap_or_else(|e| panic!("{e}"))
}

fn of_type<'a>(template: &'a Value, kind: &str) -> Vec<(&'a String, &'a Value)> {
    template::of_type(template, kind).unwrap_or_else(|e| panic!("{e}"))
}

fn props<'a>(resource: &'a Value, what: &str) -> &'a Value {
    template::props(resource, what).unwrap_or_else(|e| panic!("{e}"))
}

fn expand(value: &Value, bindings: &[(String, String)]) -> Value {
    template::expand(value, bindings).unwrap_or_else(|e| panic!("{e}"))
}

fn functions(template: &Value) -> BTreeMap<String, Function> {
    template::functions(template).unwrap_or_else(|e| panic!("{e}"))
}

fn actions_of(statement: &Value) -> Vec<String> {
    template::actions_of(statement).unwrap_or_else(|e| panic!("{e}"))
}

fn dynamodb_actions(function: &Function) -> BTreeSet<String> {
    function.dynamodb_actions().unwrap_or_else(|e| panic!("{e}"))
}

fn tier(function: &str) -> Tier {
    Tier::of(function)
}

const LOG_ACTIONS: [&str; 2] = ["logs:CreateLogStream", "logs:PutLogEvents"];

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

// ------------------------------------------------------------- table

#[test]
fn table_in_the_template_equals_the_shipped_table_definition() {
    let template = template();
    let tables = of_type(&template, "AWS::DynamoDB::Table");
    assert_eq!(tables.len(), 1, "exactly one DynamoDB table");
    let (id, table) = tables[0];
    let p = props(table, id);
    assert_eq!(
        p.get("TimeToLiveSpecification").and_then(|t| t.get("Enabled")),
        Some(&json!(true)),
        "TTL must be enabled"
    );
    let as_definition = json!({
        "AttributeDefinitions": p.get("AttributeDefinitions"),
        "KeySchema": p.get("KeySchema"),
        "BillingMode": p.get("BillingMode"),
        "GlobalSecondaryIndexes": p.get("GlobalSecondaryIndexes"),
        "TimeToLiveAttribute": p.get("TimeToLiveSpecification").and_then(|t| t.get("AttributeName")),
        "StreamSpecification": {
            "StreamEnabled": p.get("StreamSpecification").is_some(),
            "StreamViewType": p.pointer("/StreamSpecification/StreamViewType"),
        },
    });
    let in_template: TableDefinition = serde_json::from_value(as_definition)
        .unwrap_or_else(|e| panic!("the template's table does not have table.json's shape: {e}"));
    let shipped =
        TableDefinition::shipped().unwrap_or_else(|e| panic!("infra/dynamodb/table.json does not parse: {e}"));
    assert_eq!(in_template, shipped, "template.json's table drifted from table.json");
}

#[test]
fn table_is_protected_against_loss() {
    let template = template();
    for (id, table) in of_type(&template, "AWS::DynamoDB::Table") {
        let p = props(table, id);
        assert_eq!(
            p.pointer("/PointInTimeRecoverySpecification/PointInTimeRecoveryEnabled"),
            Some(&json!(true)),
            "{id}: point-in-time recovery"
        );
        assert_eq!(
            p.get("DeletionProtectionEnabled"),
            Some(&json!(true)),
            "{id}: deletion protection"
        );
        assert_eq!(
            p.pointer("/SSESpecification/SSEEnabled"),
            Some(&json!(true)),
            "{id}: SSE"
        );
        assert_eq!(
            table.get("DeletionPolicy"),
            Some(&json!("Retain")),
            "{id}: DeletionPolicy"
        );
        assert_eq!(
            table.get("UpdateReplacePolicy"),
            Some(&json!("Retain")),
            "{id}: UpdateReplacePolicy"
        );
    }
}

// ------------------------------------------------------------- functions

#[test]
fn every_api_file_is_a_function_in_the_template() {
    let deployed = functions(&template());
    let missing: Vec<_> = api_functions()
        .into_iter()
        .filter(|name| !deployed.contains_key(name))
        .collect();
    assert!(
        missing.is_empty(),
        "api/*.rs without a function in infra/aws/template.json: {missing:?} \
         (add each to the Fn::ForEach list of its tier)"
    );
}

#[test]
fn every_function_runs_the_rust_binary_of_its_own_name_with_the_draftline_environment() {
    for (name, f) in functions(&template()) {
        let p = &f.properties;
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}: not an api/*.rs binary name"
        );
        assert_eq!(p.get("Runtime"), Some(&json!("provided.al2023")), "{name}: Runtime");
        assert_eq!(p.get("Handler"), Some(&json!("bootstrap")), "{name}: Handler");
        let key = p.pointer("/Code/S3Key").and_then(sub_text);
        assert_eq!(
            key,
            Some(format!("${{CodePrefix}}/{name}.zip").as_str()),
            "{name}: S3Key"
        );
        let variables = p
            .pointer("/Environment/Variables")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{name}: no Environment.Variables"));
        for required in [
            "DRAFTLINE_TABLE",
            "DRAFTLINE_RESOURCE",
            "DRAFTLINE_ISSUER",
            "DRAFTLINE_JWKS_URL",
            "DRAFTLINE_IDEMPOTENCY_TTL_SECONDS",
        ] {
            assert!(variables.contains_key(required), "{name}: {required} is not set");
        }
        assert!(
            !variables.contains_key("DRAFTLINE_JWT_SECRET"),
            "{name}: a deployed function verifies tokens against the JWKS, not a shared secret"
        );
        assert_eq!(
            variables.get("DRAFTLINE_TABLE"),
            Some(&json!({"Ref": "Table"})),
            "{name}: DRAFTLINE_TABLE must be the table of this stack"
        );
    }
}

#[test]
fn no_function_policy_has_a_wildcard_action_or_resource() {
    let template = template();
    for (name, f) in functions(&template) {
        assert!(
            f.role.get("ManagedPolicyArns").is_none(),
            "{name}: managed policies are not reviewed here; use inline statements"
        );
        for statement in &f.statements {
            assert_eq!(statement.get("Effect"), Some(&json!("Allow")), "{name}: {statement}");
            assert!(
                statement.get("NotAction").is_none() && statement.get("NotResource").is_none(),
                "{name}: NotAction/NotResource grant everything else: {statement}"
            );
            for action in actions_of(statement) {
                assert!(!action.contains('*'), "{name}: wildcard action {action}");
                assert!(
                    action.starts_with("dynamodb:") || action.starts_with("logs:"),
                    "{name}: unexpected action {action}"
                );
            }
            let resources = statement
                .get("Resource")
                .map(strings)
                .unwrap_or_else(|| panic!("{name}: a statement without Resource: {statement}"));
            for resource in resources {
                assert_ne!(resource, &json!("*"), "{name}: Resource \"*\"");
                assert_ne!(sub_text(resource), Some("*"), "{name}: Resource \"*\"");
            }
        }
    }
}

#[test]
fn function_policies_are_scoped_to_the_table_its_indexes_and_their_own_log_group() {
    let template = template();
    let table_arn = json!({"Fn::GetAtt": ["Table", "Arn"]});
    let index_arn = "${Table.Arn}/index/*";
    for (name, f) in functions(&template) {
        let own_log_group = resources(&template)
            .iter()
            .find(|(_, r)| {
                r.get("Type") == Some(&json!("AWS::Logs::LogGroup"))
                    && r.pointer("/Properties/LogGroupName").and_then(sub_text)
                        == Some(format!("/aws/lambda/${{AWS::StackName}}-{name}").as_str())
            })
            .map(|(id, _)| id.clone())
            .unwrap_or_else(|| panic!("{name}: no log group /aws/lambda/<stack>-{name}"));
        for statement in &f.statements {
            let actions = actions_of(statement);
            for resource in statement.get("Resource").map(strings).unwrap_or_default() {
                if *resource == table_arn {
                    assert!(
                        actions.iter().all(|a| a.starts_with("dynamodb:")),
                        "{name}: the table ARN with non-DynamoDB actions {actions:?}"
                    );
                } else if sub_text(resource) == Some(index_arn) {
                    assert_eq!(
                        actions,
                        vec!["dynamodb:Query".to_owned()],
                        "{name}: ${{TableArn}}/index/* is for Query only"
                    );
                } else if sub_text(resource) == Some("${Table.Arn}/stream/*") {
                    assert_eq!(
                        tier(&name),
                        Tier::Notify,
                        "{name}: only notify reads the table's stream"
                    );
                    assert_eq!(
                        actions,
                        template::STREAM_ACTIONS.map(str::to_owned),
                        "{name}: ${{TableArn}}/stream/* is for reading the stream only"
                    );
                } else if get_att(resource) == Some((own_log_group.as_str(), "Arn")) {
                    assert!(
                        actions.iter().all(|a| LOG_ACTIONS.contains(&a.as_str())),
                        "{name}: its log group with actions {actions:?}"
                    );
                } else {
                    panic!(
                        "{name} ({}): resource outside the table and its own logs: {resource}",
                        f.logical_id
                    );
                }
            }
        }
        let log_actions: BTreeSet<String> = f
            .statements
            .iter()
            .flat_map(actions_of)
            .filter(|a| a.starts_with("logs:"))
            .collect();
        assert_eq!(log_actions, set(&LOG_ACTIONS), "{name}: log permissions");
    }
}

#[test]
fn read_tools_write_their_audit_item_and_update_their_rate_counters_only() {
    let template = template();
    let mut seen = 0;
    for (name, f) in functions(&template) {
        if tier(&name) != Tier::Read {
            continue;
        }
        seen += 1;
        assert_eq!(
            dynamodb_actions(&f),
            Tier::Read.actions(),
            "{name}: a read tool may GetItem, BatchGetItem, Query, PutItem (its audit item) and UpdateItem (its rate \
             counter), nothing else"
        );
        // Its audit item, its rate and budget counters, the trace of refused calls.
        let keys = |patterns: &[&str]| Some(patterns.iter().map(|p| (*p).to_owned()).collect::<BTreeSet<_>>());
        assert_eq!(
            writes_of(&f),
            BTreeMap::from([
                ("dynamodb:PutItem".to_owned(), keys(&["T#*#RUN#*"])),
                (
                    "dynamodb:UpdateItem".to_owned(),
                    keys(&["T#*#LIMIT#RATE#*", "T#*#BUDGET#*", "T#_anonymous#DENIED"])
                ),
            ]),
            "{name}: a read tool writes its audit item and updates its counters and the refusal trace only"
        );
    }
    assert!(seen > 0, "no read tool in the template");
}

#[test]
fn draft_tools_may_transact_and_give_a_key_back() {
    let template = template();
    let mut seen = 0;
    for (name, f) in functions(&template) {
        if tier(&name) != Tier::Draft {
            continue;
        }
        seen += 1;
        assert_eq!(
            dynamodb_actions(&f),
            Tier::Draft.actions(),
            "{name}: draft tool permissions"
        );
    }
    assert!(seen > 0, "no draft tool in the template");
}

/// Each write action a function's role grants, with the key patterns it
/// is bound to (`None`: every key).
fn writes_of(function: &Function) -> BTreeMap<String, Option<BTreeSet<String>>> {
    dynamodb_actions(function)
        .into_iter()
        .filter(|a| WRITES.contains(&a.as_str()))
        .map(|action| {
            let keys = function
                .leading_keys(&action)
                .unwrap_or_else(|e| panic!("{e}"))
                .map(|patterns| patterns.into_iter().collect());
            (action, keys)
        })
        .collect()
}

/// The write actions, which every role binds to key prefixes.
const WRITES: [&str; 4] = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
];

/// `writes` of several roles together: each action's patterns, united.
fn union_of_writes<'a>(roles: impl Iterator<Item = &'a Function>) -> BTreeMap<String, Option<BTreeSet<String>>> {
    let mut union: BTreeMap<String, Option<BTreeSet<String>>> = BTreeMap::new();
    for role in roles {
        for (action, keys) in writes_of(role) {
            match (union.entry(action).or_insert_with(|| Some(BTreeSet::new())), keys) {
                (Some(all), Some(keys)) => all.extend(keys),
                (all, None) => *all = None,
                (None, Some(_)) => {}
            }
        }
    }
    union
}

#[test]
fn every_write_is_bound_to_key_prefixes_and_no_role_grants_condition_checks() {
    for (name, f) in functions(&template()) {
        for (action, keys) in writes_of(&f) {
            assert!(
                keys.is_some(),
                "{name}: {action} on every key; bind it with dynamodb:LeadingKeys"
            );
            assert_ne!(
                action, "dynamodb:ConditionCheckItem",
                "{name}: no call sends a ConditionCheck"
            );
        }
    }
}

#[test]
fn mcp_holds_exactly_the_union_of_the_tool_permissions_and_tools_none() {
    let deployed = functions(&template());
    let tools = || {
        deployed
            .values()
            .filter(|f| matches!(tier(&f.name), Tier::Read | Tier::Draft))
    };
    let union: BTreeSet<String> = tools().flat_map(dynamodb_actions).collect();
    let mcp = deployed
        .get("mcp")
        .unwrap_or_else(|| panic!("mcp is not in the template"));
    assert_eq!(dynamodb_actions(mcp), union, "mcp: union of read and draft permissions");
    assert_eq!(
        writes_of(mcp),
        union_of_writes(tools()),
        "mcp: union of the tools' write keys"
    );
    for metadata in ["tools", "oauth_protected_resource"] {
        let f = deployed
            .get(metadata)
            .unwrap_or_else(|| panic!("{metadata} is not in the template"));
        assert!(
            dynamodb_actions(f).is_empty(),
            "{metadata} serves metadata and needs no table access"
        );
    }
}

#[test]
fn the_review_pages_read_put_unmark_and_send_again_only_and_are_configured_for_sign_in() {
    let deployed = functions(&template());
    let review = deployed
        .get("review")
        .unwrap_or_else(|| panic!("review is not in the template"));
    assert_eq!(
        dynamodb_actions(review),
        Tier::Pages.actions(),
        "review: GetItem, BatchGetItem, Query, PutItem and UpdateItem (a decision is puts in one transaction, with \
         the update that takes its draft off its near-duplicate marker)"
    );
    // UpdateItem only on the near-duplicate markers and the outbox (a dead
    // delivery sent again), in a statement of its own.
    for statement in &review.statements {
        let actions = actions_of(statement);
        if actions.iter().any(|a| a == "dynamodb:UpdateItem") {
            assert_eq!(actions, ["dynamodb:UpdateItem"], "review: {statement}");
            assert_eq!(
                statement.pointer("/Condition/ForAllValues:StringLike/dynamodb:LeadingKeys"),
                Some(&json!(["T#*#B#*#NEAR#*", "T#*#OUTBOX"])),
                "review: the pages update near-duplicate markers and outbox deliveries only: {statement}"
            );
        }
    }
    let variables = review
        .properties
        .pointer("/Environment/Variables")
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("review: no Environment.Variables"));
    for required in [
        "DRAFTLINE_SESSION_SECRET",
        "DRAFTLINE_OIDC_ISSUER",
        "DRAFTLINE_OIDC_CLIENT_ID",
        "DRAFTLINE_OIDC_CLIENT_SECRET",
        "DRAFTLINE_REVIEW_ALLOW_SELF_APPROVAL",
    ] {
        assert!(variables.contains_key(required), "review: {required} is not set");
    }
    let parameters = template();
    for secret in ["SessionSecret", "OidcClientSecret"] {
        assert_eq!(
            parameters.pointer(&format!("/Parameters/{secret}/NoEcho")),
            Some(&json!(true)),
            "{secret} is a secret"
        );
    }
    for (name, f) in &deployed {
        if name != "review" {
            let variables = f
                .properties
                .pointer("/Environment/Variables")
                .and_then(Value::as_object);
            assert!(
                variables.is_some_and(|v| !v.contains_key("DRAFTLINE_SESSION_SECRET")),
                "{name}: only the review pages hold the session secret"
            );
        }
    }
}

// ---------------------------------------------------------------- routes

#[test]
fn every_function_is_routed_and_may_be_invoked_only_by_the_http_api() {
    let template = template();
    let deployed = functions(&template);
    // route key -> function logical id, through the integration.
    let mut routes: BTreeMap<String, String> = BTreeMap::new();
    for (id, route) in of_type(&template, "AWS::ApiGatewayV2::Route") {
        let p = props(route, id);
        let key = p
            .get("RouteKey")
            .and_then(sub_text)
            .unwrap_or_else(|| panic!("{id}: RouteKey"))
            .to_owned();
        let target = p.get("Target").unwrap_or_else(|| panic!("{id}: no Target"));
        assert_eq!(sub_text(target), Some("integrations/${IntegrationId}"), "{id}: Target");
        let (integration_id, _) = target
            .pointer("/Fn::Sub/1/IntegrationId")
            .and_then(get_att)
            .unwrap_or_else(|| panic!("{id}: Target must name an integration of this template"));
        let integration = resources(&template)
            .get(integration_id)
            .unwrap_or_else(|| panic!("{id}: integration {integration_id} is missing"));
        let ip = props(integration, integration_id);
        assert_eq!(ip.get("IntegrationType"), Some(&json!("AWS_PROXY")), "{integration_id}");
        assert_eq!(ip.get("PayloadFormatVersion"), Some(&json!("2.0")), "{integration_id}");
        let (function_id, _) = ip
            .get("IntegrationUri")
            .and_then(get_att)
            .unwrap_or_else(|| panic!("{integration_id}: IntegrationUri must be a function's Arn"));
        assert!(
            routes.insert(key.clone(), function_id.to_owned()).is_none(),
            "route {key} twice"
        );
    }
    let permissions: Vec<(String, String)> = of_type(&template, "AWS::Lambda::Permission")
        .into_iter()
        .map(|(id, permission)| {
            let p = props(permission, id);
            assert_eq!(p.get("Principal"), Some(&json!("apigateway.amazonaws.com")), "{id}");
            let (function_id, _) = p
                .get("FunctionName")
                .and_then(get_att)
                .unwrap_or_else(|| panic!("{id}: FunctionName must be a function's Arn"));
            let source = p
                .get("SourceArn")
                .and_then(sub_text)
                .unwrap_or_else(|| panic!("{id}: a permission without SourceArn lets anyone invoke"));
            assert!(
                source.contains(":${HttpApi}/"),
                "{id}: SourceArn must be this HTTP API: {source}"
            );
            (function_id.to_owned(), source.to_owned())
        })
        .collect();
    let may_invoke = |function_id: &str, method: &str, path: &str| {
        permissions.iter().any(|(f, source)| {
            f == function_id && {
                let suffix = source.split_once(":${HttpApi}/*/").map_or("", |(_, s)| s);
                let (m, p) = suffix.split_once('/').unwrap_or(("", ""));
                (m == "*" || m == method)
                    && (format!("/{p}") == path
                        || p.strip_suffix('*')
                            .is_some_and(|prefix| path.starts_with(&format!("/{prefix}"))))
            }
        })
    };
    for (name, f) in &deployed {
        let expected: Vec<(&str, String)> = match tier(name) {
            Tier::Read | Tier::Draft => vec![("POST", format!("/api/{name}"))],
            Tier::Endpoint => vec![("ANY", format!("/api/{name}"))],
            Tier::Pages => vec![("ANY", "/review".to_owned()), ("ANY", "/review/{proxy+}".to_owned())],
            Tier::Metadata => vec![
                ("GET", "/.well-known/oauth-protected-resource".to_owned()),
                ("GET", "/.well-known/oauth-protected-resource/api/mcp".to_owned()),
                ("GET", format!("/api/{name}")),
            ],
            // Its stream and its schedule invoke it, never a caller
            // (`notify_runs_on_the_tables_stream_…`).
            Tier::Notify => {
                assert!(
                    !routes.values().any(|id| id == &f.logical_id),
                    "{name}: no route may reach the notify function"
                );
                assert!(
                    !permissions.iter().any(|(id, _)| id == &f.logical_id),
                    "{name}: the HTTP API may not invoke the notify function"
                );
                Vec::new()
            }
        };
        for (method, path) in expected {
            let key = format!("{method} {path}");
            assert_eq!(routes.get(&key), Some(&f.logical_id), "route {key} must reach {name}");
            let arn_method = if method == "ANY" { "*" } else { method };
            assert!(
                may_invoke(&f.logical_id, arn_method, &path),
                "{name}: no lambda permission for {key}"
            );
        }
    }
    for function_id in routes.values() {
        assert!(
            deployed.values().any(|f| &f.logical_id == function_id),
            "a route reaches {function_id}, which is not a function"
        );
    }
}

// ---------------------------------------------------------------- notify

/// The one resource of `kind` in the template.
fn only<'a>(template: &'a Value, kind: &str) -> (&'a String, &'a Value) {
    let found = of_type(template, kind);
    assert_eq!(found.len(), 1, "exactly one {kind}");
    found[0]
}

#[test]
fn notify_runs_on_the_tables_stream_filtered_to_the_outbox_and_on_a_schedule() {
    let template = template();
    let deployed = functions(&template);
    let notify = deployed
        .get("notify")
        .unwrap_or_else(|| panic!("notify is not in the template"));
    let (table_id, table) = only(&template, "AWS::DynamoDB::Table");
    assert_eq!(
        props(table, table_id).pointer("/StreamSpecification/StreamViewType"),
        Some(&json!("NEW_IMAGE")),
        "the stream carries each item as written, all notify reads"
    );

    // The stream trigger: this table's stream, outbox items only.
    let (id, mapping) = only(&template, "AWS::Lambda::EventSourceMapping");
    let p = props(mapping, id);
    assert_eq!(
        p.get("EventSourceArn").and_then(get_att),
        Some(("Table", "StreamArn")),
        "{id}"
    );
    assert_eq!(p.get("FunctionName"), Some(&json!({"Ref": notify.logical_id})), "{id}");
    assert_eq!(p.get("StartingPosition"), Some(&json!("LATEST")), "{id}");
    let filters = p
        .pointer("/FilterCriteria/Filters")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{id}: a stream trigger without a filter runs on every write"));
    let patterns: Vec<Value> = filters
        .iter()
        .map(|f| {
            let text = f.get("Pattern").and_then(Value::as_str).unwrap_or_default();
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{id}: a filter pattern that is not JSON: {e}"))
        })
        .collect();
    assert_eq!(
        patterns,
        [json!({"dynamodb": {"NewImage": {
            "kind": {"S": ["event", "delivery"]},
            "gsi1pk": {"S": ["OUTBOX#DUE"]},
        }}})],
        "{id}: outbox items waiting in the due index, nothing else"
    );

    // The schedule: every minute, with a role that may invoke notify alone.
    let (id, schedule) = only(&template, "AWS::Scheduler::Schedule");
    let p = props(schedule, id);
    assert_eq!(p.get("ScheduleExpression"), Some(&json!("rate(1 minute)")), "{id}");
    assert_eq!(p.get("State"), Some(&json!("ENABLED")), "{id}");
    assert_eq!(
        p.pointer("/Target/Arn").and_then(get_att),
        Some((notify.logical_id.as_str(), "Arn")),
        "{id}: the schedule invokes notify"
    );
    let (role_id, _) = p
        .pointer("/Target/RoleArn")
        .and_then(get_att)
        .unwrap_or_else(|| panic!("{id}: the schedule's role must be in this template"));
    let role = props(&resources(&template)[role_id], role_id);
    assert_eq!(
        role.pointer("/AssumeRolePolicyDocument/Statement/0/Principal"),
        Some(&json!({"Service": "scheduler.amazonaws.com"})),
        "{role_id}: only EventBridge Scheduler assumes it"
    );
    assert_eq!(
        role.pointer("/AssumeRolePolicyDocument/Statement/0/Condition/StringEquals/aws:SourceAccount"),
        Some(&json!({"Ref": "AWS::AccountId"})),
        "{role_id}: only this account's schedules"
    );
    let statements: Vec<&Value> = role
        .get("Policies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|policy| policy.pointer("/PolicyDocument/Statement").and_then(Value::as_array))
        .flatten()
        .collect();
    assert_eq!(statements.len(), 1, "{role_id}: one statement");
    assert_eq!(actions_of(statements[0]), ["lambda:InvokeFunction"], "{role_id}");
    assert_eq!(
        statements[0].get("Resource").and_then(get_att),
        Some((notify.logical_id.as_str(), "Arn")),
        "{role_id}: notify and nothing else"
    );

    // Its own role: the stream actions on the stream, and the outbox.
    assert_eq!(
        notify.stream_actions().unwrap_or_else(|e| panic!("{e}")),
        set(&template::STREAM_ACTIONS),
        "notify: reads its stream"
    );
    assert_eq!(dynamodb_actions(notify), Tier::Notify.actions(), "notify: its grants");
    let outbox = Some(set(&["T#*#OUTBOX"]));
    assert_eq!(
        writes_of(notify),
        BTreeMap::from([
            ("dynamodb:PutItem".to_owned(), outbox.clone()),
            ("dynamodb:UpdateItem".to_owned(), outbox),
        ]),
        "notify writes the outbox only"
    );
    for (name, f) in &deployed {
        if name != "notify" {
            assert!(
                f.stream_actions().unwrap_or_else(|e| panic!("{e}")).is_empty(),
                "{name}: only notify reads the stream"
            );
        }
    }
}

// ---------------------------------------------------------------- vercel

/// Vercel runs every function with one set of AWS credentials, so they get
/// exactly the union of what the functions get on Lambda: every action any
/// role grants, each write bound to the union of the roles' key patterns.
#[test]
fn vercel_iam_policy_grants_exactly_the_union_of_the_lambda_roles() {
    let policy = read_json("infra/aws/vercel-iam-policy.json");
    let table = "arn:aws:dynamodb:REGION:ACCOUNT_ID:table/TABLE_NAME";
    let index = format!("{table}/index/*");
    let statements = policy
        .get("Statement")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("vercel-iam-policy.json has no Statement list"));
    let mut granted = BTreeSet::new();
    for statement in statements {
        assert_eq!(statement.get("Effect"), Some(&json!("Allow")), "{statement}");
        let actions = actions_of(statement);
        for action in &actions {
            assert!(
                action.starts_with("dynamodb:") && !action.contains('*'),
                "vercel policy: action {action}"
            );
        }
        for resource in statement.get("Resource").map(strings).unwrap_or_default() {
            let resource = resource.as_str().unwrap_or_default();
            if resource == index {
                assert_eq!(actions, vec!["dynamodb:Query".to_owned()], "index/* is for Query only");
            } else {
                assert_eq!(resource, table, "vercel policy: resource {resource}");
            }
        }
        granted.extend(actions);
    }
    // The policy read as a role, to compare its write keys the same way.
    let vercel = Function {
        logical_id: "vercel-iam-policy.json".to_owned(),
        name: "vercel".to_owned(),
        properties: json!({}),
        statements: statements.clone(),
        role: json!({}),
    };
    let deployed = functions(&template());
    let union: BTreeSet<String> = deployed.values().flat_map(dynamodb_actions).collect();
    assert_eq!(granted, union, "vercel policy drifted from the Lambda roles");
    assert_eq!(
        writes_of(&vercel),
        union_of_writes(deployed.values()),
        "vercel policy's write keys drifted from the Lambda roles"
    );
}

/// Matches a Vercel `functions` glob (`*` within a path segment, `**/` any
/// directories) against a path relative to the repository root.
fn glob_matches(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p {
            [] => s.is_empty(),
            [b'*', b'*', b'/', rest @ ..] => {
                go(rest, s) || s.iter().position(|&c| c == b'/').is_some_and(|i| go(p, &s[i + 1..]))
            }
            [b'*', rest @ ..] => (0..=s.len())
                .take_while(|&i| !s[..i].contains(&b'/'))
                .any(|i| go(rest, &s[i..])),
            [c, rest @ ..] => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

#[test]
fn vercel_json_configures_every_function_without_the_legacy_runtime() {
    let vercel = read_json("vercel.json");
    assert_eq!(
        vercel.get("$schema"),
        Some(&json!("https://openapi.vercel.sh/vercel.json")),
        "$schema"
    );
    assert!(
        !vercel.to_string().contains("vercel-rust"),
        "the legacy vercel-rust runtime must not be named; the Rust runtime is detected from api/**/*.rs"
    );
    for legacy in ["builds", "routes"] {
        assert!(
            vercel.get(legacy).is_none(),
            "legacy key {legacy} (it disables functions/rewrites)"
        );
    }
    let functions = vercel
        .get("functions")
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("vercel.json has no functions object"));
    let files: Vec<String> = api_functions().iter().map(|f| format!("api/{f}.rs")).collect();
    for (pattern, settings) in functions {
        assert!(
            files.iter().any(|f| glob_matches(pattern, f)),
            "functions pattern {pattern} matches no api/*.rs (Vercel fails the build on an unmatched pattern)"
        );
        assert!(
            settings.get("runtime").is_none(),
            "{pattern}: no runtime string; it is detected"
        );
        let memory = settings.get("memory").and_then(Value::as_u64);
        assert!(
            memory.is_some_and(|m| (128..=10240).contains(&m)),
            "{pattern}: memory {memory:?}"
        );
        let duration = settings.get("maxDuration").and_then(Value::as_u64);
        assert!(duration.is_some_and(|d| d >= 1), "{pattern}: maxDuration {duration:?}");
    }
    for file in &files {
        assert!(
            functions.keys().any(|pattern| glob_matches(pattern, file)),
            "{file} has no functions settings in vercel.json"
        );
    }
}

#[test]
fn vercel_json_sweeps_the_outbox_by_cron_every_minute() {
    let vercel = read_json("vercel.json");
    assert_eq!(
        vercel.get("crons"),
        Some(&json!([{"path": "/api/notify", "schedule": "* * * * *"}])),
        "one cron: the notify function, every minute (a Hobby plan needs a daily schedule; docs/notifications.md)"
    );
    assert!(api_functions().contains("notify"), "api/notify.rs serves the cron");
}

#[test]
fn vercel_json_rewrites_the_protected_resource_metadata_paths() {
    let vercel = read_json("vercel.json");
    let rewrites = vercel
        .get("rewrites")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("vercel.json has no rewrites list"));
    let deployed = functions(&template());
    for source in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/api/mcp",
    ] {
        let rewrite = rewrites
            .iter()
            .find(|r| r.get("source") == Some(&json!(source)))
            .unwrap_or_else(|| panic!("no rewrite for {source}"));
        let destination = rewrite.get("destination").and_then(Value::as_str);
        assert_eq!(
            destination,
            Some("/api/oauth_protected_resource"),
            "rewrite of {source}"
        );
    }
    for rewrite in rewrites {
        let destination = rewrite.get("destination").and_then(Value::as_str).unwrap_or_default();
        let function = destination.strip_prefix("/api/").unwrap_or_default();
        assert!(
            deployed.contains_key(function),
            "rewrite destination {destination} is not a deployed function"
        );
    }
}

/// Matches a Vercel rewrite `source` (path-to-regexp: literal segments,
/// `:name` for one segment, `:name*` for zero or more, `:name+` for one or
/// more) against a request path.
fn source_matches(source: &str, path: &str) -> bool {
    fn go(pattern: &[&str], path: &[&str]) -> bool {
        match pattern {
            [] => path.is_empty(),
            [param, rest @ ..] if param.starts_with(':') && param.ends_with('*') => {
                (0..=path.len()).any(|taken| go(rest, &path[taken..]))
            }
            [param, rest @ ..] if param.starts_with(':') && param.ends_with('+') => {
                (1..=path.len()).any(|taken| go(rest, &path[taken..]))
            }
            [param, rest @ ..] if param.starts_with(':') => !path.is_empty() && go(rest, &path[1..]),
            [literal, rest @ ..] => path.first() == Some(literal) && go(rest, &path[1..]),
        }
    }
    let segments = |s: &'_ str| -> Vec<String> { s.split('/').filter(|p| !p.is_empty()).map(str::to_owned).collect() };
    let pattern = segments(source);
    let path = segments(path);
    let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    go(&pattern, &path)
}

/// Vercel serves `api/review.rs` at `/api/review` only; every page of
/// `/review` reaches it through a rewrite, as `ANY /review` and
/// `ANY /review/{proxy+}` do on Lambda. (The function sees the browser's
/// path: a rewrite keeps it, and appends the matched `path` to the query,
/// which the pages ignore.)
#[test]
fn vercel_json_rewrites_every_review_page_to_the_review_function() {
    let vercel = read_json("vercel.json");
    let rewrites = vercel
        .get("rewrites")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("vercel.json has no rewrites list"));
    let destination_of = |path: &str| {
        rewrites
            .iter()
            .find(|r| {
                r.get("source")
                    .and_then(Value::as_str)
                    .is_some_and(|source| source_matches(source, path))
            })
            .and_then(|r| r.get("destination").and_then(Value::as_str))
    };
    for path in [
        "/review",
        "/review/",
        "/review/assets/review.css",
        "/review/signin",
        "/review/signin/oidc",
        "/review/signin/demo",
        "/review/callback",
        "/review/signout",
        "/review/runs/run-1",
        "/review/documents/PO-SBY-000001",
        "/review/documents/PO-SBY-000001/approve",
        "/review/documents/PO-SBY-000001/reject",
    ] {
        assert_eq!(
            destination_of(path),
            Some("/api/review"),
            "vercel.json: {path} must be rewritten to /api/review"
        );
    }
    for path in ["/reviewer", "/api/mcp", "/"] {
        assert_ne!(destination_of(path), Some("/api/review"), "{path} is not a review page");
    }
}

#[test]
fn source_matching_follows_vercel_patterns() {
    assert!(source_matches("/review", "/review"));
    assert!(source_matches("/review/:path*", "/review"));
    assert!(source_matches("/review/:path*", "/review/a/b/c"));
    assert!(!source_matches("/review/:path+", "/review"));
    assert!(source_matches("/review/:path+", "/review/a"));
    assert!(source_matches("/resize/:w/:h", "/resize/1/2"));
    assert!(!source_matches("/resize/:w/:h", "/resize/1"));
    assert!(!source_matches("/review/:path*", "/reviews/a"));
}

#[test]
fn glob_matching_follows_vercel_patterns() {
    assert!(glob_matches("api/*.rs", "api/mcp.rs"));
    assert!(glob_matches("api/**/*.rs", "api/mcp.rs"));
    assert!(glob_matches("api/**/*.rs", "api/a/b.rs"));
    assert!(!glob_matches("api/*.rs", "api/a/b.rs"));
    assert!(!glob_matches("api/*.rs", "api/mcp.ts"));
    assert!(glob_matches("api/mcp.rs", "api/mcp.rs"));
}

#[test]
fn for_each_expansion_replaces_identifiers_like_the_transform() {
    let raw = json!({
        "Fn::ForEach::Loop": ["Tool", ["a_b"], {
            "Fn&{Tool}": {
                "Name": {"Fn::Sub": "${AWS::StackName}-${Tool}"},
                "Role": {"Fn::GetAtt": [{"Fn::Sub": "Role&{Tool}"}, "Arn"]},
                "Plain": "${Tool}",
                "Id": {"Ref": "Tool"}
            }
        }]
    });
    assert_eq!(
        expand(&raw, &[]),
        json!({"Fnab": {
            "Name": {"Fn::Sub": "${AWS::StackName}-a_b"},
            "Role": {"Fn::GetAtt": [{"Fn::Sub": "Roleab"}, "Arn"]},
            "Plain": "${Tool}",
            "Id": "a_b"
        }})
    );
}
