//! The idempotent draft path: the key, one read that answers every retry
//! ([`NextAction`]), the person's answer to a near-duplicate question, and
//! the atomic draft, written in one transaction with its key record, the
//! consumption of that answer and its audit item.

use std::time::Duration;

use http::StatusCode;

use super::external::{Generation, external_key};
use super::held::{Held, in_flight};
use super::{App, DRAFT_ATTEMPTS, Entry, Served, Success, Transport};
use crate::audit::{Answered, CallFacts, KeyFacts};
use crate::confirm::{self, Answer};
use crate::edge;
use crate::edge::trace::{self, Stage};
use crate::idempotency::{CommitFailure, IdempotencyKey, IdempotencyRecord, IdempotencyStore, NextAction};
use crate::policy::{Looked, Lookup};
use draftline_contract::canonical;
use draftline_contract::error::ToolError;
use draftline_contract::request::AgentContext;
use draftline_contract::store::Found;
use draftline_contract::tool::{Call, Decision, Draft, ErasedDraft, ParsedInput, Placement};
use draftline_dynamo::Item;

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
        let limits = self
            .limits
            .lookup(call.caller, call.agent.run_id.as_deref(), self.clock.now());
        let (found, limits, read) =
            match trace::stage(Stage::Idempotency, self.lookup(&store, key, limits, reads)).await {
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
        // Past a replay, a draft is held to the policy (a takeover carries
        // on a claim that was held and counted already).
        let name = tool.definition().name;
        let gate = match limits.hold(name, continued.is_some()) {
            Ok(gate) => gate,
            Err(err) => return fail(err, key_facts),
        };
        let generation = match continued {
            Some((id, reserved)) => Generation::Continued { id, reserved },
            None => Generation::New(ulid::Ulid::new().to_string()),
        };
        let checked = trace::stage(Stage::Validation, async { tool.check_rules(input, &self.rules()) }).await;
        if let Err(err) = checked {
            return fail(err, key_facts);
        }
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
            near_duplicate_window: gate.near_duplicate_window(call.near_duplicate_window),
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
            if let Draft::Placed { stakes, .. } = &prepared
                && let Err(refusal) = gate.check_priced(stakes)
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
            let (created, writes, answer) = match prepared {
                Draft::Placed {
                    placement: Placement::Atomic { document, writes },
                    answer,
                    ..
                } => (document, writes, answer),
                Draft::Placed {
                    placement: Placement::External(external),
                    answer,
                    ..
                } => {
                    // Boxed: the ERP path's future is large, and only
                    // drafts in an external ERP take it.
                    return Box::pin(self.draft_external(&held, &generation, (external.as_ref(), answer), gate)).await;
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
            let committed = self.commit_held(&held, (&output, &document), &writes, &mut gate).await;
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

    /// The stored record of `key`, read in one request with what the
    /// limits gate asks for (`limits`: the tenant's policy unless cached,
    /// the run's counter) and the draft's own `reads`, if any: the record,
    /// what the gate found, and what the draft's reads found.
    async fn lookup<'a>(
        &self,
        store: &IdempotencyStore<'_>,
        key: &IdempotencyKey,
        limits: Lookup<'a>,
        reads: Option<Vec<Item>>,
    ) -> Result<(Option<IdempotencyRecord>, Looked<'a>, Option<Found>), ToolError> {
        let mut along: Vec<Item> = limits.keys().collect();
        let reading = reads.is_some();
        along.extend(reads.into_iter().flatten());
        let (record, found) = if along.is_empty() {
            (store.lookup(key).await?, Vec::new())
        } else {
            store.lookup_along(key, along).await?
        };
        let read = reading.then(|| Found(found.iter().filter_map(draftline_dynamo::writes::attributes).collect()));
        Ok((record, limits.found(&found), read))
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
