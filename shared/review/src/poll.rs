//! Decisions made in the ERP's own workflow (Tryton: a person presses
//! Quote, Confirm or Cancel there), which draftline learns of only by
//! asking: a poll reads the agent drafts the ERP changed since a stored
//! watermark ([`Review::decided_since`]) and writes a `draft.decided`
//! event for each decision not announced before.
//!
//! At least once, and once: the watermark is the last change seen, and
//! the next poll reads from it inclusive (a change in the same instant is
//! read again); each event is written in one transaction with a marker of
//! its document and verdict (`SEEN#<number>#<verdict>`, new only), so a
//! decision read twice, by two polls or two pollers, is one event. A
//! tenant's first poll announces nothing: it starts the watermark after
//! the decisions the ERP already holds.
//!
//! [`Review::decided_since`]: draftline_erp::port::Review::decided_since

use std::process::ExitCode;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use draftline_contract::clock::{Clock, SystemClock};
use draftline_contract::error::ToolError;
use draftline_contract::identity::TenantId;
use draftline_contract::settings::{ConfigError, Source};
use draftline_contract::store::{Attributes, TableKey, TransactFailure, Value, Write};
use draftline_contract::tool::DocumentRef;
use draftline_erp::domain::DecidedDraft;
use draftline_erp::port::Erp;

use draftline_dynamo::Db;
use draftline_server::events::delivery::outbox;
use draftline_server::events::{Drafted, Event, EventDecision, EventTotal};
use draftline_server::runtime::notify::PollDecisions;
use draftline_server::storage::{DynamoTable, Table};

/// The ERP of a deployment's settings, with the tenant whose decisions it
/// keeps in its own workflow, if it does (Tryton); `None` where every
/// decision is made on the review pages (the built-in backend).
pub type PolledOf = fn(&Source, &Db) -> Result<Option<(Arc<dyn Erp>, TenantId)>, ConfigError>;

/// Runs the notify function (`api/notify.rs`,
/// [`draftline_server::runtime::notify`]): each scheduled round polls the
/// decisions of the ERP `polled` names, when it keeps its own, then sweeps
/// the outbox.
pub async fn run_function(polled: PolledOf) -> ExitCode {
    draftline_server::runtime::notify::run(|source, config, db| {
        let Some((erp, tenant)) = polled(source, db)? else {
            return Ok(None);
        };
        let review_pages = format!("{}/review", draftline_server::auth::origin_of(&config.resource));
        let table = Arc::new(DynamoTable::new(db.clone()));
        let poller = Poller::new(table, erp, tenant, review_pages, Arc::new(SystemClock));
        Ok(Some(Arc::new(poller) as Arc<dyn PollDecisions>))
    })
    .await
}

/// The most decisions one poll reads of each kind.
const PAGE: usize = 100;

/// Polls one tenant's ERP for decisions made there.
#[derive(Clone)]
pub struct Poller {
    table: Arc<dyn Table>,
    erp: Arc<dyn Erp>,
    tenant: TenantId,
    review_pages: String,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("tenant", &self.tenant)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl PollDecisions for Poller {
    async fn poll(&self) -> Result<usize, ToolError> {
        Poller::poll(self).await
    }
}

impl Poller {
    /// A poller of `tenant`'s decisions in `erp`, writing events into
    /// `table` that link to the review pages under `review_pages`.
    pub fn new(
        table: Arc<dyn Table>,
        erp: Arc<dyn Erp>,
        tenant: TenantId,
        review_pages: String,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            table,
            erp,
            tenant,
            review_pages,
            clock,
        }
    }

    fn watermark_key(&self) -> TableKey {
        TableKey {
            pk: outbox(&self.tenant),
            sk: "POLL#decisions".to_owned(),
        }
    }

    /// Polls every `every`, forever; a failed poll is a warn line and the
    /// next one tries again from the same watermark.
    pub async fn run(self, every: std::time::Duration) {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Err(err) = self.poll().await {
                tracing::warn!(tenant = %self.tenant, error = %err, "polling the ERP's decisions failed");
            }
        }
    }

    /// One poll: the events it wrote (decisions not announced before).
    pub async fn poll(&self) -> Result<usize, ToolError> {
        let stored = self.table.get(vec![self.watermark_key()], "Nothing was read.").await?;
        let since = stored
            .first()
            .and_then(|item| item.get("since"))
            .and_then(Value::as_s)
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .map(|at| at.with_timezone(&Utc));
        let Some(since) = since else {
            let start = self.history_end().await?;
            self.store_watermark(start).await?;
            return Ok(0);
        };
        let decided = self.decided(Some(since)).await?;
        let mut written = 0;
        let mut last = since;
        for found in &decided {
            if self.announce(found).await? {
                written += 1;
            }
            last = last.max(found.changed_at);
        }
        if last != since {
            self.store_watermark(last).await?;
        }
        Ok(written)
    }

    async fn decided(&self, since: Option<DateTime<Utc>>) -> Result<Vec<DecidedDraft>, ToolError> {
        self.erp
            .decided_since(&self.tenant, since, PAGE)
            .await
            .map_err(|err| ToolError::internal(format!("reading the decisions made in the ERP: {err}")))
    }

    /// Where the first poll of a tenant starts: just after the last
    /// decision the ERP already holds (what was decided before draftline
    /// first asked is history, not news), or, when it holds none, five
    /// minutes before now (a margin for the two clocks; a decision read
    /// twice is announced once).
    async fn history_end(&self) -> Result<DateTime<Utc>, ToolError> {
        let mut end = None;
        loop {
            let page = self.decided(end).await?;
            let Some(last) = page.iter().map(|found| found.changed_at).max() else {
                break;
            };
            end = Some(last + chrono::Duration::microseconds(1));
            if page.len() < PAGE {
                break;
            }
        }
        Ok(end.unwrap_or_else(|| self.clock.now() - chrono::Duration::minutes(5)))
    }

    async fn store_watermark(&self, since: DateTime<Utc>) -> Result<(), ToolError> {
        let key = self.watermark_key();
        let item = Attributes::from([
            ("pk".to_owned(), Value::S(key.pk)),
            ("sk".to_owned(), Value::S(key.sk)),
            ("kind".to_owned(), Value::s("poll_watermark")),
            (
                "since".to_owned(),
                Value::S(since.to_rfc3339_opts(SecondsFormat::Micros, true)),
            ),
        ]);
        self.table
            .write(Write::PutIf(item, None), "The watermark was not moved.")
            .await?
            .map_err(|_| ToolError::internal("the watermark's write was refused"))
    }

    /// Writes the `draft.decided` event of `found` with its marker, in one
    /// transaction; `false` if it was announced before.
    async fn announce(&self, found: &DecidedDraft) -> Result<bool, ToolError> {
        let draft = &found.draft;
        let Some(decision) = &draft.decision else {
            return Ok(false);
        };
        let verdict = decision.verdict.as_str();
        let marker = Attributes::from([
            ("pk".to_owned(), Value::S(outbox(&self.tenant))),
            ("sk".to_owned(), Value::S(format!("SEEN#{}#{verdict}", draft.number))),
            ("kind".to_owned(), Value::s("decision_seen")),
            ("decided_by".to_owned(), Value::s(&decision.decided_by)),
        ]);
        let document = DocumentRef {
            id: draft.id.clone(),
            number: draft.number.clone(),
            kind: draft.kind.code().to_owned(),
        };
        let drafted = Drafted {
            run_id: draft.drafted_by_agent_run.clone(),
            total: Some(EventTotal {
                amount: draft.total.amount.clone(),
                currency: draft.total.currency.clone(),
            }),
            drafted_for: Some(draft.drafted_on_behalf_of.clone()).filter(|person| !person.is_empty()),
        };
        let event = Event::decided(
            (self.tenant.as_str(), &found.branch),
            (&document, drafted),
            EventDecision {
                verdict: verdict.to_owned(),
                decided_by: decision.decided_by.clone(),
                reason: decision.reason.clone(),
            },
            &self.review_pages,
            self.clock.now(),
        );
        let writes = vec![Write::PutNew(marker), event.put()];
        match self
            .table
            .transact(writes, &ulid::Ulid::new().to_string(), "No event was written.")
            .await
        {
            Ok(()) => Ok(true),
            Err(TransactFailure::Failed(err)) => Err(err),
            // The marker exists: announced before.
            Err(_) => Ok(false),
        }
    }
}
