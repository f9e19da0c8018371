//! The idempotent draft path: the key, one read that answers every retry
//! ([`NextAction`]), the person's answer to a near-duplicate question, and
//! the atomic draft, written in one transaction with its key record, the
//! consumption of that answer and its audit item.

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;

use super::external::{Generation, external_key};
use super::held::{Held, Policed, in_flight};
use super::{App, DRAFT_ATTEMPTS, Entry, Served, Success, Transport};
use crate::audit::{Answered, CallFacts, KeyFacts};
use crate::confirm::{self, Answer};
use crate::edge;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyRecord, IdempotencyStore, NextAction};
use crate::policy::{self, Gate};
use draftline_contract::canonical;
use draftline_contract::error::ToolError;
use draftline_contract::policy::Applied;
use draftline_contract::request::AgentContext;
use draftline_contract::store::Found;
use draftline_contract::tool::{Call, Decision, Draft, ErasedDraft, ParsedInput, Placement};
use draftline_dynamo::{Item, same_key};

impl App {
    /// The idempotent draft path.
    pub(super) async fn draft(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        body: &[u8],
        entry: &Entry<'_>,
    ) -> Served {
        let keyed = async {
            let header = edge::idempotency_header(entry.headers)?;
            let input = tool.parse(body)?;
            let key = draft_key(header, call.agent, tool.client_ref(&input)?, entry.transport)?;
            let fingerprint = canonical::fingerprint(tool.definition().name, &input.canonical);
            Ok::<_, ToolError>((input, key, fingerprint))
        };
        let (input, key, fingerprint) = match trace::stage(Stage::Validation, keyed).await {
            Ok(keyed) => keyed,
            Err(err) => return Served::unaudited(Err(err), None),
        };
        let facts_of_key = KeyFacts {
            key: key.to_string(),
            fingerprint,
            answered: None,
        };
        self.draft_with_key(tool, call, facts, &input, &key, facts_of_key, entry.answer)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn draft_with_key(
        &self,
        tool: &dyn ErasedDraft,
        call: &Call<'_>,
        facts: &CallFacts,
        input: &ParsedInput,
        key: &IdempotencyKey,
        key_facts: KeyFacts,
        answer: Option<&Result<Answer, ToolError>>,
    ) -> Served {
        let owner = format!("{}/{}", call.caller.branch(), call.caller.user());
        let store = IdempotencyStore::new(&self.db, call.caller);
        let fail = |err: ToolError, key_facts: KeyFacts| Served::unaudited(Err(err), Some(key_facts));

        // One read answers every retry: replay, conflict or in flight. It
        // comes before the rules that depend on the clock, so a retry after
        // midnight still finds yesterday's draft.
        // Which use of the key this call continues: a claim whose lease
        // lapsed (its worker died, perhaps after the ERP write) is continued,
        // anything else starts a new one.
        // The tenant's policy comes with it (cached, or in the same request),
        // and the run's counter when the policy may limit its drafts.
        // What the draft reads from the table (a backend that keeps its
        // data there: the counterparty, items, prices, the near-duplicate
        // marker) comes in that same request.
        // Unless this instance answered the key already: then the call is
        // almost certainly a replay, and the record is read alone (a record
        // gone after all makes a draft that reads its data itself).
        let reads = if self.answered.answered(call.caller, key, self.clock.now()) {
            None
        } else {
            tool.reads(call, input)
                .map(|keys| keys.iter().map(draftline_dynamo::writes::key).collect())
        };
        let Looked {
            record: found,
            applied,
            run_use,
            read,
        } = match trace::stage(Stage::Idempotency, self.lookup(&store, key, call, reads)).await {
            Ok(found) => found,
            Err(err) => return fail(err, key_facts),
        };
        let continued = match found {
            Some(record) => match record.next_action(&key_facts.fingerprint, &owner, self.clock.now()) {
                NextAction::Proceed => None,
                NextAction::LeaseExpired { generation, reserved } => Some((generation, reserved)),
                answered => match answer_of(answered, key) {
                    Some(Ok(replayed)) => {
                        self.answered.remember(call.caller, key, record.expires_at);
                        return Served::unaudited(Ok(replayed), Some(key_facts));
                    }
                    Some(answer) => return Served::unaudited(answer, Some(key_facts)),
                    None => None,
                },
            },
            None => None,
        };
        // Past a replay, a draft is held to the policy; one that cannot be
        // read refuses it, before anything is prepared (fail closed).
        let applied = match applied {
            Ok(applied) => applied,
            // A takeover carries on a claim that was held to the policy and
            // counted, and may have written: it is not refused (the refusal
            // would say nothing was created), and counts nothing again.
            Err(_) if continued.is_some() => None,
            Err(err) => return fail(err, key_facts),
        };
        let mut gate = Gate::new(applied.clone());
        // A new draft in a run already at its count is refused here, before
        // the ERP is asked to price it: its counter came with the lookup. A
        // takeover is not: its claim counted it already.
        if continued.is_none()
            && let (Some(applied), Some(run)) = (&applied, call.agent.run_id.as_deref())
            && let Some(refusal) =
                policy::Counting::run_at_its_count(applied, call.caller, run, run_use.as_ref(), self.clock.now())
            && let Err(refusal) = gate.meet(refusal)
        {
            return fail(refusal, key_facts);
        }
        let generation = match continued {
            Some((id, reserved)) => Generation::Continued { id, reserved },
            None => Generation::New(ulid::Ulid::new().to_string()),
        };
        let checked = trace::stage(Stage::Validation, async { tool.check_rules(input, &self.rules()) }).await;
        if let Err(err) = checked {
            return fail(err, key_facts);
        }
        let name = tool.definition().name;
        let fingerprint = key_facts.fingerprint.clone();
        let asked = confirm::Asked {
            caller: call.caller,
            tool: name,
            fingerprint: &fingerprint,
            key,
        };
        let confirmed = match answer {
            None => None,
            Some(Err(err)) => return fail(err.clone(), key_facts),
            Some(Ok(answer)) => match confirm::decide(&self.cursors, answer, &asked, self.clock.now()) {
                Ok(confirmed) => Some(confirmed),
                Err(err) => return fail(err, key_facts),
            },
        };
        let mut key_facts = key_facts;
        key_facts.answered = confirmed.as_ref().map(|c| Answered {
            decision: match c.decision {
                Decision::CreateAnother => "create_another",
                Decision::UseExisting(_) => "use_existing",
            },
            existing: c.existing.clone(),
        });
        let consumption = confirmed.as_ref().and_then(|c| c.consumption.as_ref());
        let draft_key = external_key(call.caller, key, generation.id());
        let call = Call {
            draft_key: Some(&draft_key),
            decision: confirmed.as_ref().map(|c| &c.decision),
            // The policy's window, if it sets one; else the deployment's.
            near_duplicate_window: match applied.as_ref().and_then(|a| a.near_duplicate_hours) {
                Some(0) => None,
                Some(hours) => Some(Duration::from_secs(u64::from(hours) * 3600)),
                None => call.near_duplicate_window,
            },
            ..*call
        };
        for attempt in 0..DRAFT_ATTEMPTS {
            // The lookup's reads stand for the first preparation only: one
            // that lost a race reads what the winner wrote.
            let call = Call {
                found: read.as_ref().filter(|_| attempt == 0),
                ..call
            };
            let prepared = match trace::stage(Stage::Erp, tool.prepare(&call, input)).await {
                Ok(prepared) => prepared,
                Err(ToolError::InputRequired { message, question, .. }) => {
                    // Nothing was created: seal what the person is asked
                    // about, so only their answer to this very call (under
                    // its own key) counts, once.
                    let state = confirm::seal(&self.cursors, &asked, &question.existing.number, self.clock.now());
                    return match state {
                        Ok(state) => fail(
                            ToolError::InputRequired {
                                message,
                                question,
                                request_state: Some(state),
                            },
                            key_facts,
                        ),
                        Err(err) => fail(err, key_facts),
                    };
                }
                Err(err) => return fail(err, key_facts),
            };
            // The counterparty rule, before anything is written (on either
            // backend: before the ERP is asked, too). Observe mode goes on
            // and the draft's audit item names the rule.
            let mut gate = gate.clone();
            if let (Some(applied), Draft::Placed { stakes, .. }) = (&applied, &prepared)
                && let Some(refusal) = policy::counterparty::outside(applied, stakes)
                && let Err(refusal) = gate.meet(refusal)
            {
                return fail(refusal, key_facts);
            }
            let held = Held {
                call: &call,
                facts,
                name,
                key_facts: &key_facts,
                owner: &owner,
                store: &store,
                key,
                consumption,
            };
            let (created, writes, answer, stakes) = match prepared {
                Draft::Placed {
                    placement: Placement::Atomic { document, writes },
                    answer,
                    stakes,
                } => (document, writes, answer, stakes),
                Draft::Placed {
                    placement: Placement::External(external),
                    answer,
                    stakes,
                } => {
                    let policed = Policed { gate, stakes: &stakes };
                    // Boxed: the ERP path's future is large, and only
                    // drafts in an external ERP take it.
                    return Box::pin(self.draft_external(&held, &generation, (external.as_ref(), answer), policed))
                        .await;
                }
                // A person chose the existing draft: nothing is written.
                Draft::Existing { document, output } => {
                    return Served::unaudited(
                        Ok(Success {
                            status: StatusCode::OK,
                            data: output,
                            replayed: false,
                            document: Some(document),
                        }),
                        Some(key_facts),
                    );
                }
            };
            let output = match answer(&created) {
                Ok(output) => output,
                Err(err) => return fail(err, key_facts),
            };
            let document = created.document;
            let writes = match draftline_dynamo::transact_items(&self.db, &writes) {
                Ok(writes) => writes,
                Err(err) => return fail(err, key_facts),
            };
            let policed = Policed { gate, stakes: &stakes };
            let committed = self.commit_held(&held, (output, document), writes, policed).await;
            let (committed, created) = match committed {
                Ok(committed) => committed,
                Err(err) => return fail(err, key_facts),
            };
            match committed {
                Ok(()) => {
                    return Served::audited(created, Some(key_facts));
                }
                Err(CommitFailure::KeyTaken(Some(record))) => {
                    if let Some(answer) = self.answer_from_record(&record, key, &key_facts.fingerprint, &owner) {
                        return Served::unaudited(answer, Some(key_facts));
                    }
                }
                Err(CommitFailure::KeyTaken(None) | CommitFailure::KeyInFlight) => {
                    return fail(in_flight(key, 1), key_facts);
                }
                Err(CommitFailure::Contention | CommitFailure::CountersContended) => {
                    tokio::time::sleep(Duration::from_millis(5 + 20 * attempt as u64)).await;
                }
                Err(CommitFailure::AnswerUsed) => return fail(confirm::already_used(), key_facts),
                Err(CommitFailure::Store(err)) => return fail(err, key_facts),
                Err(CommitFailure::OverLimit { .. }) => {
                    return fail(ToolError::internal("a limit was reached after it was read"), key_facts);
                }
            }
        }
        fail(
            ToolError::Busy {
                message: format!(
                    "Other drafts of your branch were being numbered at the same moment, and this draft lost the \
                     race {DRAFT_ATTEMPTS} times. No draft was created. Retry this same call unchanged (key \
                     '{key}') in a second."
                ),
                retry_after_seconds: 1,
            },
            key_facts,
        )
    }

    /// The stored record of `key`, the limits of the tenant's policy that
    /// apply to the caller's branch, and (when they limit a run's drafts)
    /// the counter of the caller's run: the policy from the warm
    /// instance's cache while fresh, else read in the same request as the
    /// record, and the counter in that request too. A policy that cannot
    /// be read is the draft's refusal, which a replay (answered by the
    /// record) never meets.
    async fn lookup(
        &self,
        store: &IdempotencyStore<'_>,
        key: &IdempotencyKey,
        call: &Call<'_>,
        reads: Option<Vec<Item>>,
    ) -> Result<Looked, ToolError> {
        let now = self.clock.now();
        let caller = call.caller;
        let tenant = caller.tenant();
        let run_pk = call
            .agent
            .run_id
            .as_deref()
            .map(|run| policy::counters::run_pk(caller.owner(), run));
        let cached = self.policies.fresh_for_draft(tenant, caller.branch(), now);
        // Whether the run's counter is worth its place in the request: the
        // cached policy limits the run's drafts and this instance does not
        // know the run to have room for this draft ([`policy::runs`]), or
        // the policy comes along.
        let counts_runs = match &cached {
            Some(Ok(Some(applied))) => applied
                .run_drafts
                .is_some_and(|max| !run_pk.as_deref().is_some_and(|pk| self.runs.has_room(pk, max, now))),
            Some(_) => false,
            None => true,
        };
        let run_key = run_pk
            .as_deref()
            .filter(|_| counts_runs)
            .map(policy::counters::run_key_at);
        let mut along = Vec::new();
        if cached.is_none() {
            along.push(policy::store::current_key(tenant));
        }
        along.extend(run_key.clone());
        let reading = reads.is_some();
        along.extend(reads.into_iter().flatten());
        let (record, found) = if along.is_empty() {
            (store.lookup(key).await?, Vec::new())
        } else {
            store.lookup_along(key, along).await?
        };
        let find = |key: &Item| found.iter().find(|item| same_key(item, key));
        let applied = cached.unwrap_or_else(|| {
            let item = find(&policy::store::current_key(tenant));
            self.policies.remember_for_draft(tenant, item, caller.branch(), now)
        });
        let run_use = run_key.as_ref().and_then(find).cloned();
        if let (Some(pk), Some(_), Ok(Some(applied))) = (&run_pk, &run_key, &applied)
            && applied.run_drafts.is_some()
        {
            let drafts = run_use
                .as_ref()
                .map_or(0, |item| policy::counters::used(item, policy::counters::DRAFTS));
            self.runs.read(pk, drafts, now);
        }
        Ok(Looked {
            record,
            applied,
            run_use,
            read: reading.then(|| Found(found.iter().filter_map(draftline_dynamo::writes::attributes).collect())),
        })
    }

    /// What a stored record answers; `None` if the key is free after all.
    pub(super) fn answer_from_record(
        &self,
        record: &IdempotencyRecord,
        key: &IdempotencyKey,
        fingerprint: &str,
        owner: &str,
    ) -> Option<Result<Success, ToolError>> {
        answer_of(record.next_action(fingerprint, owner, self.clock.now()), key)
    }
}

/// What a draft's key lookup found: the key's record, the limits that
/// hold the draft (or its refusal), and the run's counter as stored.
struct Looked {
    record: Option<IdempotencyRecord>,
    applied: Result<Option<Arc<Applied>>, ToolError>,
    run_use: Option<Item>,
    /// What the batch found for the draft's own reads, when it asked any.
    read: Option<Found>,
}

/// The answer a key record's next action gives a call, when it answers
/// one (a replay, a conflict, in flight); `None` when the call goes on.
fn answer_of(next: NextAction, key: &IdempotencyKey) -> Option<Result<Success, ToolError>> {
    match next {
        NextAction::Replay(stored) => Some(Ok(Success {
            // The stored answer, sent again: a created draft's 201 becomes
            // 200 with `replayed: true` (DESIGN.md: 201 is for the call that
            // created it).
            status: if stored.status == StatusCode::CREATED {
                StatusCode::OK
            } else {
                stored.status
            },
            data: stored.data,
            replayed: true,
            document: stored.document,
        })),
        NextAction::Conflict => Some(Err(ToolError::KeyReused(format!(
            "Idempotency key '{key}' was already used for a different request (other arguments or another \
             tool). No draft was created. If you are retrying, resend exactly the original arguments; if this \
             is a new draft, use a new key (or a new client_ref)."
        )))),
        NextAction::InFlight(after) => Some(Err(in_flight(key, after))),
        NextAction::Proceed | NextAction::LeaseExpired { .. } => None,
    }
}

fn draft_key(
    header: Option<IdempotencyKey>,
    agent: &AgentContext,
    client_ref: &str,
    transport: Transport,
) -> Result<IdempotencyKey, ToolError> {
    if let Some(key) = header {
        return Ok(key);
    }
    let derived = match (&agent.run_id, transport) {
        (Some(run), _) => Some(IdempotencyKey::from_run(run, client_ref)),
        (None, Transport::Mcp) => Some(IdempotencyKey::from_client_ref(client_ref)),
        (None, Transport::Http) => None,
    };
    match derived {
        Some(key) => key.map_err(|reason| ToolError::invalid("header:X-Agent-Run-Id", reason)),
        None => Err(ToolError::invalid(
            "header:Idempotency-Key",
            "A draft needs an idempotency key so that a retry cannot create a second document. Send an \
             'Idempotency-Key' header (a new unique value per intended draft, the same value when you retry), \
             or an 'X-Agent-Run-Id' header, which is combined with client_ref. No draft was created.",
        )),
    }
}
