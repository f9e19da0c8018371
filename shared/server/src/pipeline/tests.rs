//! The pipeline's flow on the in-memory table ([`MemoryTable`]) and the
//! in-memory ERP: each path a draft's key can take, through the app's own
//! entry point, with the records, audit items and counters it leaves. The
//! black-box suite runs the same paths on the real engine.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{Request, StatusCode};
use serde_json::{Value, json};

use super::App;
use crate::auth::mint::{TokenClaims, mint_hs256};
use crate::config::{Config, LOCAL_DEV_SECRET, LOCAL_ISSUER};
use crate::edge::Admitted;
use crate::idempotency::{Claim, ClaimedWith, Claiming, IdempotencyKey, IdempotencyStore};
use crate::policy::PolicyStore;
use crate::storage::MemoryTable;
use draftline_contract::clock::ManualClock;
use draftline_contract::identity::{BranchCode, BranchId, Caller, Scopes, TenantId, UserId};
use draftline_contract::policy::Policy;
use draftline_contract::store::{Attributes, TableKey, Value as Stored};
use draftline_contract::tool::Registered;
use draftline_erp::demo;
use draftline_erp::testing::{MemoryErp, Placing, demo_now};

const RESOURCE: &str = "http://draftline.test";
const TOOL: &str = "purchasing_create_po_draft";

/// An app on a fresh in-memory table, drafting into the demo's in-memory
/// ERP placed as `placing`, on a manual clock at the demo's now.
struct Flow {
    app: App,
    erp: MemoryErp,
    table: Arc<MemoryTable>,
    clock: Arc<ManualClock>,
    caller: Caller,
    token: String,
}

impl Flow {
    fn new(placing: Placing) -> Self {
        let erp = MemoryErp::demo().unwrap().placing(placing);
        let table = Arc::new(MemoryTable::new());
        let clock = Arc::new(ManualClock::new(demo_now().unwrap()));
        let config = Config::local(RESOURCE.to_owned(), "in memory".to_owned());
        let app = App::on_table(
            draftline_erp::catalogue(erp.port()),
            config,
            table.clone(),
            clock.clone(),
        );
        let erp = erp.clone();
        let user = demo::user("buyer-sby").unwrap();
        let caller = Caller::from_verified(
            TenantId::parse(demo::TENANT).unwrap(),
            BranchId::parse(user.branch_id).unwrap(),
            BranchCode::parse(user.branch_code).unwrap(),
            UserId::parse(user.sub).unwrap(),
            Vec::new(),
            Scopes::from_claim(user.scope),
        );
        let claims = TokenClaims::new(
            LOCAL_ISSUER,
            RESOURCE,
            user.sub,
            demo::TENANT,
            user.branch_id,
            user.branch_code,
            user.scope,
            Vec::new(),
            600,
        );
        let token = mint_hs256(LOCAL_DEV_SECRET, &claims).unwrap();
        Self {
            app,
            erp,
            table,
            clock,
            caller,
            token,
        }
    }

    /// Drafts `input` under `key` (in agent run `run`), with `confirm`
    /// (a person's answer) if given: the status and body.
    async fn draft(&self, key: &str, input: &Value, run: &str, confirm: Option<&str>) -> (StatusCode, Value) {
        let mut request = Request::post(format!("{RESOURCE}/api/{TOOL}"))
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("idempotency-key", key)
            .header("x-agent-run-id", run);
        if let Some(confirm) = confirm {
            request = request.header("draftline-confirm", confirm);
        }
        let request = request.body(Bytes::from(input.to_string())).unwrap();
        let response = self.app.handle_tool(TOOL, Admitted::new(request, RESOURCE)).await;
        let status = response.status();
        (status, serde_json::from_slice(response.body()).unwrap())
    }

    /// The key store of the demo buyer's `key`.
    fn keys<'a>(&'a self, key: &'a IdempotencyKey) -> IdempotencyStore<'a> {
        IdempotencyStore::new(self.table.as_ref(), &self.caller, key)
    }

    /// The stored record of `key`.
    async fn record(&self, key: &str) -> Option<crate::idempotency::IdempotencyRecord> {
        let key = IdempotencyKey::parse_header(key).unwrap();
        self.keys(&key).lookup().await.unwrap()
    }

    /// The audit items of agent run `run`.
    fn audit(&self, run: &str) -> Vec<Attributes> {
        self.table
            .partition(&crate::audit::run_partition(self.caller.tenant(), run))
    }

    /// Sets the tenant's policy: `mode`, limiting each run to `drafts`.
    async fn policy(&self, mode: &str, drafts: u32) {
        let document = format!(
            r#"{{"version": null, "mode": "{mode}", "time_zone": "+07:00",
                "limits": {{"per_run": {{"max_drafts": {drafts}}}}}, "branches": null}}"#
        );
        let policy = Policy::parse(document.as_bytes()).unwrap();
        PolicyStore::new(self.table.as_ref(), self.caller.tenant())
            .set(&policy, "test", self.now())
            .await
            .map_err(|_| "the policy was not set")
            .unwrap();
    }

    /// The fingerprint a draft of `input` is recorded under.
    fn fingerprint(&self, input: &Value) -> String {
        let Some(Registered::Draft(tool)) = self.app.registry().get(TOOL) else {
            panic!("{TOOL} is no draft tool");
        };
        let parsed = tool.parse(input.to_string().as_bytes()).unwrap();
        draftline_contract::canonical::fingerprint(TOOL, &parsed.canonical)
    }

    fn now(&self) -> DateTime<Utc> {
        use draftline_contract::clock::Clock;
        self.clock.now()
    }
}

/// A PO draft of `client_ref` for the demo buyer.
fn po(client_ref: &str) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-15",
        "client_ref": client_ref,
        "lines": [
            {"item_code": "BRG-0042", "qty": 10, "uom": "BOX"},
            {"item_code": "BRG-0043", "qty": 30, "uom": "PCS"}
        ]
    })
}

fn text<'a>(item: &'a Attributes, name: &str) -> Option<&'a str> {
    item.get(name).and_then(Stored::as_s)
}

#[tokio::test]
async fn a_fresh_draft_is_written_with_its_key_record_and_audit_item_in_one_transaction() {
    let flow = Flow::new(Placing::Atomic);
    let (status, body) = flow.draft("k-fresh", &po("r-1"), "run-1", None).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let number = body["data"]["po_number"].as_str().unwrap().to_owned();
    // One read (the key with the draft's own reads) and one transaction.
    assert_eq!(flow.table.requests().get("transact"), Some(&1));
    assert_eq!(flow.table.requests().get("get"), Some(&1));
    let record = flow.record("k-fresh").await.unwrap();
    assert_eq!(record.status, crate::idempotency::RecordStatus::Completed);
    let audit = flow.audit("run-1");
    assert_eq!(audit.len(), 1);
    assert_eq!(text(&audit[0], "document_number"), Some(number.as_str()));
    assert_eq!(text(&audit[0], "outcome"), Some("ok"));
    // The document's own write landed in the same transaction.
    let branch = flow.caller.branch().as_str();
    let document = flow.table.item(&TableKey {
        pk: format!("MEMORY#{branch}#PO"),
        sk: number,
    });
    assert!(document.is_some(), "the document's write is in the table");
}

#[tokio::test]
async fn a_retry_under_the_same_key_replays_the_stored_answer_and_writes_only_its_audit_item() {
    let flow = Flow::new(Placing::Atomic);
    let (_, first) = flow.draft("k-replay", &po("r-1"), "run-1", None).await;
    let (status, again) = flow.draft("k-replay", &po("r-1"), "run-1", None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["replayed"], true);
    assert_eq!(again["data"], first["data"]);
    assert_eq!(flow.table.requests().get("transact"), Some(&1), "no second transaction");
    assert_eq!(
        flow.table.requests().get("append"),
        Some(&1),
        "the replay's audit item alone"
    );
    assert_eq!(flow.audit("run-1").len(), 2);
}

#[tokio::test]
async fn the_same_key_with_other_arguments_is_a_conflict_and_creates_nothing() {
    let flow = Flow::new(Placing::Atomic);
    flow.draft("k-conflict", &po("r-1"), "run-1", None).await;
    let mut other = po("r-1");
    other["lines"][0]["qty"] = json!(11);
    let (status, body) = flow.draft("k-conflict", &other, "run-1", None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "CONFLICT");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already used for a different request")
    );
    assert_eq!(flow.table.requests().get("transact"), Some(&1));
}

#[tokio::test]
async fn a_key_another_worker_holds_under_a_live_lease_is_in_flight_and_creates_nothing() {
    let flow = Flow::new(Placing::Atomic);
    let key = IdempotencyKey::parse_header("k-held").unwrap();
    let fingerprint = flow.fingerprint(&po("r-1"));
    let owner = format!("{}/{}", flow.caller.branch(), flow.caller.user());
    let claimed = flow
        .keys(&key)
        .claim(
            &claiming("g-1", &fingerprint, &owner, flow.now()),
            ClaimedWith::default(),
        )
        .await
        .unwrap();
    assert!(matches!(claimed, Claim::Acquired(_)), "{claimed:?}");
    let (status, body) = flow.draft("k-held", &po("r-1"), "run-1", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "CONFLICT");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is still being processed")
    );
    assert_eq!(flow.table.requests().get("transact"), None, "nothing written");
}

#[tokio::test]
async fn a_claim_whose_lease_lapsed_is_taken_over_and_completed_under_its_own_generation() {
    let flow = Flow::new(Placing::External);
    let key = IdempotencyKey::parse_header("k-lapsed").unwrap();
    let fingerprint = flow.fingerprint(&po("r-1"));
    let owner = format!("{}/{}", flow.caller.branch(), flow.caller.user());
    flow.keys(&key)
        .claim(
            &claiming("g-dead", &fingerprint, &owner, flow.now()),
            ClaimedWith::default(),
        )
        .await
        .unwrap();
    flow.clock.advance(chrono::Duration::seconds(120));
    let (status, body) = flow.draft("k-lapsed", &po("r-1"), "run-1", None).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let record = flow.record("k-lapsed").await.unwrap();
    assert_eq!(record.status, crate::idempotency::RecordStatus::Completed);
    // The ERP's document carries the lapsed claim's own draft key: the same
    // use of the key, continued (a new use would carry another).
    let continued = super::external::external_key(&flow.keys(&key), "g-dead");
    let keys: Vec<Option<String>> = flow.erp.read(|books| {
        books
            .purchase_orders
            .iter()
            .filter(|filed| filed.key.is_some())
            .map(|filed| filed.key.clone())
            .collect()
    });
    assert_eq!(keys, [Some(continued)]);
}

#[tokio::test]
async fn a_run_over_its_policys_count_is_refused_and_its_counter_stays_at_the_limit() {
    let flow = Flow::new(Placing::Atomic);
    flow.policy("enforce", 1).await;
    let (status, body) = flow.draft("k-1", &po("r-1"), "run-limit", None).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = flow.draft("k-2", &po("r-2"), "run-limit", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "LIMIT_REACHED");
    assert_eq!(body["error"]["limit"]["name"], "per_run.max_drafts");
    let counter = run_counter(&flow, "run-limit");
    assert_eq!(
        crate::policy::counters::used(&counter, crate::policy::counters::DRAFTS),
        1
    );
    let refused: Vec<_> = flow.audit("run-limit");
    assert!(
        refused
            .iter()
            .any(|item| text(item, "limit") == Some("per_run.max_drafts")),
        "the refusal's audit item names the limit"
    );
    assert!(
        flow.record("k-2").await.is_none(),
        "a refused draft leaves no key record"
    );
}

#[tokio::test]
async fn in_observe_mode_a_draft_past_the_limit_is_created_counted_and_labelled() {
    let flow = Flow::new(Placing::Atomic);
    flow.policy("observe", 1).await;
    flow.draft("k-1", &po("r-1"), "run-observe", None).await;
    let (status, body) = flow.draft("k-2", &po("r-2"), "run-observe", None).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let counter = run_counter(&flow, "run-observe");
    assert_eq!(
        crate::policy::counters::used(&counter, crate::policy::counters::DRAFTS),
        2
    );
    let audit = flow.audit("run-observe");
    let labelled: Vec<_> = audit
        .iter()
        .filter(|item| item.get("would_have_been_refused") == Some(&Stored::Bool(true)))
        .collect();
    assert_eq!(
        labelled.len(),
        1,
        "the second draft's item says what would have refused it"
    );
    assert_eq!(text(labelled[0], "limit"), Some("per_run.max_drafts"));
}

#[tokio::test]
async fn a_persons_create_another_answer_creates_one_draft_and_its_second_use_is_refused() {
    let flow = Flow::new(Placing::External);
    let (status, _) = flow.draft("k-first", &po("r-1"), "run-1", None).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, asked) = flow.draft("k-second", &po("r-2"), "run-1", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{asked}");
    assert_eq!(asked["error"]["code"], "INPUT_REQUIRED");
    let state = asked["error"]["inputRequired"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = format!("create-another {state}");
    let (status, body) = flow.draft("k-second", &po("r-2"), "run-1", Some(&answer)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // The key's record lost (swept, or removed by hand): the same answer
    // again finds itself consumed, and nothing more is created.
    let key = IdempotencyKey::parse_header("k-second").unwrap();
    flow.table.remove(&flow.keys(&key).record_key());
    let (status, body) = flow.draft("k-second", &po("r-2"), "run-1", Some(&answer)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("already used"),
        "{body}"
    );
}

/// The counter of the demo buyer's run `run`.
fn run_counter(flow: &Flow, run: &str) -> Attributes {
    flow.table
        .item(&crate::policy::counters::run_key(flow.caller.owner(), run))
        .unwrap_or_default()
}

/// A claim of `generation` by `owner` at `now` under a 30-second lease.
fn claiming<'a>(generation: &'a str, fingerprint: &'a str, owner: &'a str, now: DateTime<Utc>) -> Claiming<'a> {
    Claiming {
        generation,
        tool: TOOL,
        fingerprint,
        owner,
        request_id: "req-other-worker",
        now,
        lease: Duration::from_secs(30),
        ttl: Duration::from_secs(86_400),
        reserved: None,
    }
}
