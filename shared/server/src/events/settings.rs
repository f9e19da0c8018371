//! A tenant's notification settings: its webhook endpoints, kept in
//! versions like its policy (`T#<tenant>#NOTIFY`,
//! [`crate::storage::versions`]) and set with `draftline notify set FILE`.
//!
//! ```json
//! {
//!   "version": null,
//!   "endpoints": [
//!     {
//!       "id": "orchestrator",
//!       "url": "https://agents.example.com/hooks/draftline",
//!       "events": ["draft.created", "draft.decided"],
//!       "secrets": ["whsec_…"]
//!     }
//!   ]
//! }
//! ```
//!
//! An endpoint has one secret, or two during a rotation (each delivery is
//! signed with both). The same file says who is told by e-mail
//! ([`super::mail`]): `people` maps each person (their `sub`) to an
//! address, and `approvers` names, per branch and module, the people who
//! approve its agent drafts:
//!
//! ```json
//! {
//!   "people": {"approver-sby": "ana@example.com", "buyer-sby": "budi@example.com"},
//!   "approvers": {"SBY-01": {"purchasing": ["approver-sby"]}}
//! }
//! ```
//!
//! A file is parsed strictly: every problem with its JSON path, before
//! anything is written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::EventType;
use super::endpoint::Reach;
use super::sign::Secret;
use crate::storage::Table;
use crate::storage::versions::{SetFailure, Version, Versions};
use draftline_contract::FieldIssue;
use draftline_contract::error::ToolError;
use draftline_contract::identity::TenantId;

/// The most endpoints a tenant has (each event fans out to them in one
/// transaction).
pub const MAX_ENDPOINTS: usize = 10;

/// A tenant's notification settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    /// The version this file was edited from (`null`: replace whatever is
    /// stored; 0: expect none).
    #[serde(default)]
    pub version: Option<u64>,
    /// Where events are sent.
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
    /// Each person's e-mail address, by their user id (`sub`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub people: BTreeMap<String, String>,
    /// Who approves agent drafts, by branch, then module (`purchasing`,
    /// `sales`): their user ids.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub approvers: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// One webhook endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// Its name: 1 to 32 of a-z, 0-9, `-` and `_`, unique in the file.
    pub id: String,
    /// Where deliveries are POSTed.
    pub url: String,
    /// The events it receives.
    pub events: Vec<EventType>,
    /// One signing secret, or two during a rotation.
    pub secrets: Vec<String>,
}

impl Endpoint {
    /// Its secrets, parsed (the settings were checked when set; one that
    /// no longer parses is left out).
    pub fn keys(&self) -> Vec<Secret> {
        self.secrets.iter().filter_map(|s| Secret::parse(s).ok()).collect()
    }

    /// Whether it receives events of `kind`.
    pub fn wants(&self, kind: EventType) -> bool {
        self.events.contains(&kind)
    }
}

impl NotifySettings {
    /// Parses a settings file strictly: every problem, with its JSON path,
    /// URLs judged by what `reach` allows here.
    pub fn parse(bytes: &[u8], reach: Reach) -> Result<Self, Vec<FieldIssue>> {
        let mut reading = serde_json::Deserializer::from_slice(bytes);
        let settings: Self = serde_path_to_error::deserialize(&mut reading).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            vec![FieldIssue::schema(path, e.inner().to_string())]
        })?;
        let issues = settings.issues(reach);
        if issues.is_empty() { Ok(settings) } else { Err(issues) }
    }

    fn issues(&self, reach: Reach) -> Vec<FieldIssue> {
        let mut issues = Vec::new();
        if self.endpoints.len() > MAX_ENDPOINTS {
            issues.push(FieldIssue::new(
                "endpoints",
                format!(
                    "at most {MAX_ENDPOINTS} endpoints; this file has {}",
                    self.endpoints.len()
                ),
            ));
        }
        let mut ids = std::collections::BTreeSet::new();
        for (i, endpoint) in self.endpoints.iter().enumerate() {
            let at = |field: &str| format!("endpoints[{i}].{field}");
            let id = &endpoint.id;
            let well_formed = (1..=32).contains(&id.len())
                && id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !well_formed {
                issues.push(FieldIssue::new(at("id"), "1 to 32 of a-z, 0-9, - and _"));
            } else if !ids.insert(id.as_str()) {
                issues.push(FieldIssue::new(at("id"), format!("'{id}' names two endpoints")));
            }
            if let Err(why) = reach.check_url(&endpoint.url) {
                issues.push(FieldIssue::new(at("url"), why));
            }
            let unique: std::collections::BTreeSet<_> = endpoint.events.iter().collect();
            if endpoint.events.is_empty() || unique.len() != endpoint.events.len() {
                issues.push(FieldIssue::new(
                    at("events"),
                    "one or both of draft.created and draft.decided, each once",
                ));
            }
            if !(1..=2).contains(&endpoint.secrets.len()) {
                issues.push(FieldIssue::new(
                    at("secrets"),
                    "one secret, or two during a rotation (draftline notify secret makes one)",
                ));
            }
            for (j, secret) in endpoint.secrets.iter().enumerate() {
                if let Err(why) = Secret::parse(secret) {
                    issues.push(FieldIssue::new(format!("endpoints[{i}].secrets[{j}]"), why));
                }
            }
        }
        self.people_issues(&mut issues);
        issues
    }

    fn people_issues(&self, issues: &mut Vec<FieldIssue>) {
        for (person, address) in &self.people {
            if draftline_contract::identity::UserId::parse(person).is_err() {
                issues.push(FieldIssue::new(format!("people.{person}"), "not a user id"));
            } else if address.parse::<lettre::Address>().is_err() {
                issues.push(FieldIssue::new(
                    format!("people.{person}"),
                    "not an e-mail address (write it as name@example.com)",
                ));
            }
        }
        for (branch, modules) in &self.approvers {
            if draftline_contract::identity::BranchId::parse(branch).is_err() {
                issues.push(FieldIssue::new(format!("approvers.{branch}"), "not a branch id"));
            }
            for (module, people) in modules {
                let at = format!("approvers.{branch}.{module}");
                if !matches!(module.as_str(), "purchasing" | "sales") {
                    issues.push(FieldIssue::new(
                        at.clone(),
                        "a module whose drafts are approved: purchasing or sales",
                    ));
                }
                for person in people {
                    if !self.people.contains_key(person) {
                        issues.push(FieldIssue::new(
                            at.clone(),
                            format!("'{person}' has no address in people"),
                        ));
                    }
                }
            }
        }
    }

    /// The addresses to tell of an event of `kind` about a document of
    /// `module` in `branch`, drafted for `drafted_for`: its approvers
    /// (created), or the person drafted for (decided). Each (user id,
    /// address) once.
    pub fn recipients(
        &self,
        kind: EventType,
        (branch, module): (&str, &str),
        drafted_for: Option<&str>,
    ) -> Vec<(String, String)> {
        let people: Vec<&String> = match kind {
            EventType::DraftCreated => self
                .approvers
                .get(branch)
                .and_then(|modules| modules.get(module))
                .map(|people| people.iter().collect())
                .unwrap_or_default(),
            EventType::DraftDecided => drafted_for
                .and_then(|person| self.people.get_key_value(person))
                .map(|(person, _)| vec![person])
                .unwrap_or_default(),
        };
        let mut seen = std::collections::BTreeSet::new();
        people
            .into_iter()
            .filter(|person| seen.insert(person.as_str()))
            .filter_map(|person| Some((person.clone(), self.people.get(person)?.clone())))
            .collect()
    }

    /// The settings with each secret shown as its last 4 characters.
    pub fn redacted(&self) -> Self {
        let mut shown = self.clone();
        for endpoint in &mut shown.endpoints {
            for secret in &mut endpoint.secrets {
                let tail: String = secret
                    .chars()
                    .rev()
                    .take(4)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                *secret = format!("whsec_…{tail}");
            }
        }
        shown
    }
}

/// Reads and writes one tenant's notification settings.
#[derive(Debug, Clone)]
pub struct NotifyStore<'a> {
    versions: Versions<'a>,
}

/// The partition of `tenant`'s notification settings.
pub fn partition(tenant: &TenantId) -> String {
    format!("T#{tenant}#NOTIFY")
}

impl<'a> NotifyStore<'a> {
    /// The store of `tenant`'s settings in `table`.
    pub fn new(table: &'a dyn Table, tenant: &TenantId) -> Self {
        Self {
            versions: Versions::new(
                table,
                partition(tenant),
                "notify",
                "The notification settings were not changed.",
            ),
        }
    }

    /// The settings in force (`None`: none set), with their version, or
    /// why the stored ones cannot be read.
    pub async fn in_force(&self) -> Result<Option<(u64, NotifySettings)>, ToolError> {
        let Some(item) = self.versions.current().await? else {
            return Ok(None);
        };
        let version = crate::storage::versions::version_of(&item).unwrap_or(0);
        let document = item.get("document").and_then(|v| v.as_s()).unwrap_or_default();
        // Judged again at each delivery: what was allowed when it was set
        // is not trusted to be allowed here.
        let reach = Reach { loopback: true };
        match NotifySettings::parse(document.as_bytes(), reach) {
            Ok(settings) => Ok(Some((version, settings))),
            Err(issues) => Err(ToolError::internal(format!(
                "the stored notification settings (version {version}) cannot be read: {}",
                issues.first().map_or("", |issue| issue.message.as_str())
            ))),
        }
    }

    /// Stores `settings` as the next version, if the stored ones are still
    /// `settings.version`. Returns what was stored.
    pub async fn set(
        &self,
        settings: &NotifySettings,
        by: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Version, SetFailure> {
        let document = |version: u64| {
            serde_json::to_string(&NotifySettings {
                version: Some(version),
                ..settings.clone()
            })
            .map_err(ToolError::internal)
        };
        self.versions.set(settings.version, document, by, now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryTable;

    fn file(url: &str, secrets: &[&str]) -> String {
        serde_json::json!({
            "version": null,
            "endpoints": [{"id": "orchestrator", "url": url, "events": ["draft.created"], "secrets": secrets}]
        })
        .to_string()
    }

    #[test]
    fn a_file_is_parsed_strictly_with_each_problem_at_its_path() {
        let secret = Secret::generate();
        let good = file("https://hooks.example.com/x", &[&secret]);
        let settings = NotifySettings::parse(good.as_bytes(), Reach::default()).unwrap();
        assert!(settings.endpoints[0].wants(EventType::DraftCreated));
        assert!(!settings.endpoints[0].wants(EventType::DraftDecided));
        assert_eq!(settings.endpoints[0].keys().len(), 1);
        assert!(!serde_json::to_string(&settings.redacted()).unwrap().contains(&secret));

        let bad = file("https://169.254.169.254/", &["whsec_c2hvcnQ=", "whsec_x", "whsec_y"]);
        let issues = NotifySettings::parse(bad.as_bytes(), Reach::default()).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "endpoints[0].url",
                "endpoints[0].secrets",
                "endpoints[0].secrets[0]",
                "endpoints[0].secrets[1]",
                "endpoints[0].secrets[2]"
            ]
        );
        assert!(issues[0].message.contains("metadata"), "{issues:?}");
        let unknown = NotifySettings::parse(br#"{"endpoints": [], "hooks": []}"#, Reach::default()).unwrap_err();
        assert!(unknown[0].message.contains("unknown field `hooks`"), "{unknown:?}");
        let event = file("https://hooks.example.com/x", &[&secret]).replace("draft.created", "draft.made");
        let refused = NotifySettings::parse(event.as_bytes(), Reach::default()).unwrap_err();
        assert_eq!(refused[0].path, "endpoints[0].events[0]", "{refused:?}");
    }

    #[test]
    fn mail_goes_to_the_branchs_approvers_of_the_module_or_to_the_person_drafted_for() {
        let file = serde_json::json!({
            "people": {"approver-sby": "ana@demo.test", "buyer-sby": "budi@demo.test"},
            "approvers": {"SBY-01": {"purchasing": ["approver-sby", "approver-sby"]}}
        });
        let settings = NotifySettings::parse(file.to_string().as_bytes(), Reach::default()).unwrap();
        let to = |kind, place, drafted_for| settings.recipients(kind, place, drafted_for);
        let ana = vec![("approver-sby".to_owned(), "ana@demo.test".to_owned())];
        assert_eq!(
            to(EventType::DraftCreated, ("SBY-01", "purchasing"), None),
            ana,
            "each once"
        );
        assert!(to(EventType::DraftCreated, ("SBY-01", "sales"), None).is_empty());
        assert!(to(EventType::DraftCreated, ("JKT-01", "purchasing"), None).is_empty());
        assert_eq!(
            to(EventType::DraftDecided, ("SBY-01", "purchasing"), Some("buyer-sby")),
            [("buyer-sby".to_owned(), "budi@demo.test".to_owned())]
        );
        assert!(to(EventType::DraftDecided, ("SBY-01", "purchasing"), Some("clerk-sby")).is_empty());

        let bad = serde_json::json!({
            "people": {"ana": "not-an-address"},
            "approvers": {"SBY-01": {"purchase": ["nobody"]}}
        });
        let issues = NotifySettings::parse(bad.to_string().as_bytes(), Reach::default()).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            ["people.ana", "approvers.SBY-01.purchase", "approvers.SBY-01.purchase"]
        );
        assert!(
            issues[2].message.contains("'nobody' has no address in people"),
            "{issues:?}"
        );
    }

    #[tokio::test]
    async fn settings_are_versioned_and_a_stale_edit_changes_nothing() {
        let table = MemoryTable::default();
        let tenant = TenantId::parse("demo").unwrap();
        let store = NotifyStore::new(&table, &tenant);
        assert_eq!(store.in_force().await.unwrap(), None);
        let settings = NotifySettings::parse(
            file("https://a.example.com/", &[&Secret::generate()]).as_bytes(),
            Reach::default(),
        )
        .unwrap();
        let now = chrono::Utc::now();
        assert_eq!(store.set(&settings, "ops", now).await.unwrap().number, 1);
        assert_eq!(
            store.set(&settings, "ops", now).await.unwrap().number,
            2,
            "null overwrites"
        );
        let stale = NotifySettings {
            version: Some(1),
            ..settings.clone()
        };
        assert!(matches!(
            store.set(&stale, "ops", now).await,
            Err(SetFailure::Moved { stored: 2 })
        ));
        let (version, stored) = store.in_force().await.unwrap().unwrap();
        assert_eq!((version, stored.version), (2, Some(2)));
        assert_eq!(stored.endpoints, settings.endpoints);
    }
}
