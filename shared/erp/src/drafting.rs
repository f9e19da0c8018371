//! The draft engine: the one skeleton every document an agent drafts goes
//! through, whatever its kind. A kind ([`DraftKind`], implemented by its
//! tool) says only what differs: its counterparty and how it is found and
//! checked, its lines' own rules (a quote's tax code), its extra checks (a
//! quote's credit standing), and its document (number series, statuses and
//! own fields, through the port's place operation). The steps are written
//! here once:
//!
//! read (from the key lookup's batch where it read) → the counterparty →
//! each line's item, unit and price, and the kind's rule → amounts that do
//! not fit → the largest total → a near-duplicate asks a person → totals →
//! who drafted it → stakes → place.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use draftline_contract::error::{ExistingDraft, FieldIssue, Question};
use draftline_contract::store::TableKey;
use draftline_contract::tool::{Call, Counterparty, Decision, Draft, Placement, Stakes};
use draftline_contract::validation::rejected_with;
use draftline_contract::{ErpError, ToolError};
use rust_decimal::Decimal;

use crate::domain::{Document, DocumentKind, DraftDocument, Item, NewDraft, OpenDraft, PoLine, Reviewable};
use crate::money::{self, LineAmounts, Money};
use crate::port::{CounterpartyReads, DraftReads, Erp, Scope, Wanted, Window};
use crate::pricing;
use crate::units::Uom;

/// What every refusal of a draft adds: nothing was written.
pub(crate) const NO_DRAFT: &str = "No draft was created.";

/// A draft tool's input as the skeleton reads it ([`draft_tool!`] writes it).
pub(crate) trait DraftInput: Send + Sync {
    /// One line of it.
    type Line: LineInput;
    /// The counterparty's code.
    fn counterparty(&self) -> &str;
    /// The lines.
    fn lines(&self) -> &[Self::Line];
    /// The caller's own reference.
    fn client_ref(&self) -> &str;
    /// The note for the reviewer.
    fn note(&self) -> Option<&str>;
}

/// One line of a draft tool's input: an item, a quantity and its unit.
pub(crate) trait LineInput: Send + Sync {
    /// The item's code.
    fn item_code(&self) -> &str;
    /// Whole units.
    fn qty(&self) -> i64;
    /// The unit of `qty`.
    fn uom(&self) -> Uom;
}

/// A draft tool over the ERP port: its struct, its [`DraftTool`] through
/// the skeleton, and its input as the skeleton reads it. The kind's own
/// rules are its [`DraftKind`], written by hand.
///
/// [`DraftTool`]: draftline_contract::tool::DraftTool
macro_rules! draft_tool {
    ($tool:ident: $input:ident { $counterparty:ident, lines: $line:ident }) => {
        $crate::tools::erp_tool!($tool);

        #[async_trait::async_trait]
        impl draftline_contract::tool::DraftTool for $tool {
            fn client_ref(input: &$input) -> &str {
                &input.client_ref
            }

            fn reads(
                &self,
                call: &draftline_contract::tool::Call<'_>,
                input: &$input,
            ) -> Option<Vec<draftline_contract::store::TableKey>> {
                $crate::drafting::keys::<Self>(&*self.erp, call, input)
            }

            async fn draft(
                &self,
                call: &draftline_contract::tool::Call<'_>,
                input: $input,
            ) -> Result<draftline_contract::tool::Draft<Self::Output>, draftline_contract::ToolError> {
                $crate::drafting::draft(self, &*self.erp, call, input).await
            }
        }

        impl $crate::drafting::DraftInput for $input {
            type Line = $line;
            fn counterparty(&self) -> &str {
                &self.$counterparty
            }
            fn lines(&self) -> &[$line] {
                &self.lines
            }
            fn client_ref(&self) -> &str {
                &self.client_ref
            }
            fn note(&self) -> Option<&str> {
                self.note.as_deref()
            }
        }

        impl $crate::drafting::LineInput for $line {
            fn item_code(&self) -> &str {
                &self.item_code
            }
            fn qty(&self) -> i64 {
                self.qty
            }
            fn uom(&self) -> $crate::units::Uom {
                self.uom
            }
        }
    };
}
pub(crate) use draft_tool;

/// The words a kind's answers use where the skeleton speaks for it.
pub(crate) struct Words {
    /// Where a model checks an item code (`inventory_get_stock`).
    pub item_hint: &'static str,
    /// How the kind deals in an item's units (`stocked`, `sold`).
    pub unit_verb: &'static str,
    /// The tool that reads the document back (`purchasing_get_po`).
    pub read_tool: &'static str,
}

/// The counterparty a draft is for, checked, with the price list its
/// lines are priced from.
pub(crate) struct Party<P> {
    /// Its code.
    pub code: String,
    /// Its name.
    pub name: String,
    /// The currency of every amount of the draft.
    pub currency: String,
    /// The price list as a line's price source names it.
    pub list: String,
    /// The list's prices: item, unit, price per unit.
    pub prices: Vec<(String, Uom, Decimal)>,
    /// What else the kind keeps of it (a quote's customer and standing).
    pub own: P,
}

impl<P> Party<P> {
    /// The list's price of one `uom` of `item`, if it has one.
    pub fn price_of(&self, item: &str, uom: Uom) -> Option<Decimal> {
        self.prices
            .iter()
            .find(|(i, u, _)| i == item && *u == uom)
            .map(|(_, _, price)| *price)
    }
}

/// One line as the skeleton priced it, for the kind to make its own: the
/// line every kind has (a purchase order's is exactly this), its total
/// the net amount and the tax.
pub(crate) struct Priced {
    /// The line.
    pub line: PoLine,
    /// qty × unit price, rounded.
    pub net: Money,
    /// The kind's tax on it (zero where it taxes nothing).
    pub tax: Money,
}

/// A kind's document before the ERP numbers it.
pub(crate) type DraftOf<K> =
    DraftDocument<<K as DraftKind>::Printed, <K as DraftKind>::DocLine, <K as DraftKind>::Fields>;

/// A document kind an agent drafts: what differs from the skeleton. Its
/// document is [`Reviewable`] (its number series, statuses and own
/// fields), and the port's [`Drafting`](crate::port::Drafting) operations
/// take it by its [`DocumentKind`].
#[async_trait]
pub(crate) trait DraftKind: Send + Sync {
    /// The tool's input.
    type Input: DraftInput;
    /// What the kind keeps of its counterparty besides the [`Party`].
    type Own: Send + Sync;
    /// What a line's own rule settles (a quote's tax type).
    type Rule: Send;
    /// The counterparty as the document prints it.
    type Printed: Clone + Send + Sync + 'static;
    /// One priced line of the document.
    type DocLine: Clone + Send + Sync + 'static;
    /// What only the kind's document has.
    type Fields: Clone + Send + Sync + 'static;
    /// The document.
    type Output: Reviewable<Draft = DraftOf<Self>> + TryFrom<Document, Error = ErpError> + Send + Sync + 'static;

    /// How the skeleton speaks for the kind.
    const WORDS: Words;

    /// The counterparty of what was `read`, checked (a refusal otherwise),
    /// with its prices for `items` (read now where the port did not).
    async fn party(
        &self,
        scope: &Scope<'_>,
        read: CounterpartyReads,
        items: &HashMap<String, Item>,
        input: &Self::Input,
    ) -> Result<Party<Self::Own>, ToolError>;
    /// Why each of `lines` (its index and item) has no price on the list.
    async fn unpriced(
        &self,
        scope: &Scope<'_>,
        party: &Party<Self::Own>,
        lines: &[(usize, &Item)],
    ) -> Result<Vec<FieldIssue>, ToolError>;
    /// The line's own rule, once its item is priced (a quote's tax code).
    fn rule(
        party: &Party<Self::Own>,
        index: usize,
        line: &<Self::Input as DraftInput>::Line,
    ) -> Result<Self::Rule, FieldIssue>;
    /// The tax `rule` puts on `net`; `None` when it does not fit.
    fn tax(rule: &Self::Rule, net: Decimal) -> Option<Decimal>;
    /// The document's line.
    fn line(rule: Self::Rule, priced: Priced) -> Self::DocLine;
    /// The existing document `number` a person chose to keep.
    async fn existing(&self, scope: &Scope<'_>, number: String) -> Result<Self::Output, ToolError>;
    /// The counterparty as the document prints it.
    fn printed(party: &Party<Self::Own>) -> Self::Printed;
    /// What only the kind's document has, once every line is priced.
    fn fields(party: Party<Self::Own>, input: &Self::Input, sums: &LineAmounts) -> Result<Self::Fields, ToolError>;
}

/// A refusal of reads of another kind than the draft's: a backend's bug.
pub(crate) fn mismatch(kind: DocumentKind) -> ToolError {
    ToolError::from(ErpError::internal(format!(
        "a backend read another kind's counterparty for a {}",
        kind.code()
    )))
}

/// The keys of draftline's table a draft of `input` reads in the key lookup.
pub(crate) fn keys<K: DraftKind>(erp: &dyn Erp, call: &Call<'_>, input: &K::Input) -> Option<Vec<TableKey>> {
    let codes = item_codes(input.lines().iter().map(LineInput::item_code));
    let wanted = Wanted {
        counterparty: input.counterparty(),
        items: &codes,
        marked: call.near_duplicate_window.is_some(),
    };
    erp.draft_reads(&Scope::of(call.caller), K::Output::KIND, &wanted)
}

/// Reads, checks and prices a draft of `input`, asks a person about a
/// near-duplicate, and places it in `erp`: the skeleton.
pub(crate) async fn draft<K: DraftKind>(
    kind: &K,
    erp: &dyn Erp,
    call: &Call<'_>,
    input: K::Input,
) -> Result<Draft<K::Output>, ToolError>
where
    DraftOf<K>: Into<NewDraft>,
{
    let scope = Scope::of(call.caller);
    let asking = Asking::of(call, input.lines().iter().map(LineInput::item_code));
    let wanted = Wanted {
        counterparty: input.counterparty(),
        items: &asking.codes,
        marked: call.near_duplicate_window.is_some(),
    };
    // From the key lookup's batch where it read them.
    let DraftReads {
        counterparty,
        items,
        open,
    } = erp
        .read_for_draft(&scope, K::Output::KIND, &wanted, asking.window(), call.found)
        .await?;
    let party = kind.party(&scope, counterparty, &items, &input).await?;
    let (lines, totals) = price(kind, &scope, &party, &items, input.lines()).await?;
    // Ask rather than guess: the same items for the same counterparty
    // drafted within the window under another key.
    let asked = (party.code.as_str(), K::Output::KIND.code(), K::WORDS.read_tool);
    let chosen = |number| kind.existing(&scope, number);
    if let Some(settled) = asking.settle(call, &open.drafts, asked, chosen).await? {
        return Ok(settled);
    }
    let counterparty = Counterparty {
        kind: K::Output::KIND.counterparty(),
        code: party.code.clone(),
    };
    let draft = document::<K>(call, &input, party, lines, totals)?;
    let stakes = Stakes {
        total: Some(money::counted(&draft.total)?),
        counterparty: Some(counterparty),
    };
    // Only a draft that passed every check is placed (and numbered), so
    // refused input writes nothing and leaves no gap.
    let now = call.clock.now();
    let placed = erp.place_draft(&scope, draft.clone().into(), call.draft_key, open.seen, now);
    let placement = placed.await?.try_map(K::Output::try_from)?;
    Ok(prepared(
        placement,
        draft,
        K::Output::numbered,
        call.review_pages,
        stakes,
    ))
}

/// The document of `lines` for `party`, drafted in `call`.
fn document<K: DraftKind>(
    call: &Call<'_>,
    input: &K::Input,
    party: Party<K::Own>,
    lines: Vec<K::DocLine>,
    sums: LineAmounts,
) -> Result<DraftOf<K>, ToolError> {
    Ok(DraftDocument {
        branch_id: call.caller.branch().to_string(),
        counterparty: K::printed(&party),
        currency: party.currency.clone(),
        lines,
        subtotal: Money::new(sums.net, &party.currency),
        total: Money::new(sums.total, &party.currency),
        note: input.note().map(str::to_owned),
        client_ref: input.client_ref().to_owned(),
        drafted_by_agent_run: call.agent.run_id.clone(),
        drafted_on_behalf_of: call.caller.user().to_string(),
        drafted_by_tool_call: call.agent.tool_call_id.clone(),
        own: K::fields(party, input, &sums)?,
    })
}

/// What checking one line came to.
enum Checked<'a, L> {
    /// Priced: the document's line and its amounts.
    Line(L, LineAmounts),
    /// Refused.
    Issue(FieldIssue),
    /// The list has no price for it: named once every line is checked.
    Unpriced(&'a Item),
}

/// Every line checked and priced, or every refused line named.
async fn price<K: DraftKind>(
    kind: &K,
    scope: &Scope<'_>,
    party: &Party<K::Own>,
    items: &HashMap<String, Item>,
    lines: &[<K::Input as DraftInput>::Line],
) -> Result<(Vec<K::DocLine>, LineAmounts), ToolError> {
    let mut issues = Vec::new();
    let mut unpriced = Vec::new();
    let mut priced = Vec::with_capacity(lines.len());
    let mut amounts = Vec::with_capacity(lines.len());
    let mut counted = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        match check::<K>(party, items, i, line)? {
            Checked::Line(line, line_amounts) => {
                counted.push((i, line_amounts.total));
                amounts.push(line_amounts);
                priced.push(line);
            }
            Checked::Issue(issue) => issues.push(issue),
            Checked::Unpriced(item) => {
                // A place held in line order, filled once the kind explains it.
                unpriced.push((issues.len(), (i, item)));
                issues.push(FieldIssue::new(String::new(), String::new()));
            }
        }
    }
    if !unpriced.is_empty() {
        let lines: Vec<(usize, &Item)> = unpriced.iter().map(|(_, line)| *line).collect();
        let explained = kind.unpriced(scope, party, &lines).await?;
        for ((at, _), issue) in unpriced.iter().zip(explained) {
            if let Some(slot) = issues.get_mut(*at) {
                *slot = issue;
            }
        }
    }
    issues.extend(money::past_largest(&counted, &party.currency));
    if !issues.is_empty() {
        return Err(rejected_with(issues, NO_DRAFT));
    }
    let overflow = || money::overflow(&format!("the {} total", K::Output::KIND.noun()));
    let sums = LineAmounts::sum(&amounts).ok_or_else(overflow)?;
    Ok((priced, sums))
}

/// Line `i`: its item, its unit, its price on the list, the kind's rule,
/// and amounts that fit.
fn check<'a, K: DraftKind>(
    party: &Party<K::Own>,
    items: &'a HashMap<String, Item>,
    i: usize,
    line: &<K::Input as DraftInput>::Line,
) -> Result<Checked<'a, K::DocLine>, ToolError> {
    let (code, qty, uom) = (line.item_code(), line.qty(), line.uom());
    let Some(item) = items.get(code) else {
        let hint = K::WORDS.item_hint;
        let message = format!("Item {code} does not exist. Check the code with {hint}.");
        return Ok(Checked::Issue(FieldIssue::new(
            format!("lines[{i}].item_code"),
            message,
        )));
    };
    let Some(unit) = item.unit(uom) else {
        let allowed: Vec<&str> = item.units.iter().map(|u| u.uom.code()).collect();
        let message = format!(
            "Item {code} is not {verb} in {uom}. Allowed units for {code}: {units}. Resend the line with uom \
             {choices}.",
            code = item.code,
            verb = K::WORDS.unit_verb,
            units = item.describe_units(),
            choices = allowed.join(" or "),
        );
        return Ok(Checked::Issue(FieldIssue::new(format!("lines[{i}].uom"), message)));
    };
    let Some(price) = pricing::unit_price(&party.list, item, uom, |u| party.price_of(&item.code, u)) else {
        return Ok(Checked::Unpriced(item));
    };
    let rule = match K::rule(party, i, line) {
        Ok(rule) => rule,
        Err(issue) => return Ok(Checked::Issue(issue)),
    };
    let overflow = || money::overflow(&format!("lines[{i}] ({} x {qty} {uom})", item.code));
    let amounts = LineAmounts::of(price.unit_price, qty, |net| K::tax(&rule, net)).ok_or_else(overflow)?;
    let currency = &party.currency;
    let line = PoLine {
        line_no: u32::try_from(i).map_or(u32::MAX, |i| i.saturating_add(1)),
        item_code: item.code.clone(),
        item_name: item.name.clone(),
        qty,
        uom,
        base_qty: qty.checked_mul(unit.factor).ok_or_else(overflow)?,
        base_uom: item.base_uom,
        unit_price: Money::new(price.unit_price, currency),
        price_source: price.source,
        line_total: Money::new(amounts.total, currency),
    };
    let priced = Priced {
        line,
        net: Money::new(amounts.net, currency),
        tax: Money::new(amounts.tax, currency),
    };
    Ok(Checked::Line(K::line(rule, priced), amounts))
}

/// The start of the near-duplicate window ending `now` (`now` itself when
/// there is no window or it does not fit the calendar).
fn window_start(now: DateTime<Utc>, window: Option<std::time::Duration>) -> DateTime<Utc> {
    window
        .and_then(|w| chrono::Duration::from_std(w).ok())
        .and_then(|w| now.checked_sub_signed(w))
        .unwrap_or(now)
}

/// Item codes sorted and without repeats: a draft's item set.
fn item_codes<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let codes: std::collections::BTreeSet<&str> = items.into_iter().collect();
    codes.into_iter().map(str::to_owned).collect()
}

/// What the near-duplicate check has to do for a call with `decision`.
enum Check {
    /// Look for an open draft of the same items.
    Look,
    /// A person chose to create another draft anyway.
    Skip,
    /// A person chose the existing draft with this number.
    UseExisting(String),
}

impl Check {
    fn of(decision: Option<&Decision>, window: Option<std::time::Duration>) -> Self {
        match decision {
            None if window.is_some() => Self::Look,
            None => Self::Skip,
            Some(Decision::CreateAnother) => Self::Skip,
            Some(Decision::UseExisting(number)) => Self::UseExisting(number.clone()),
        }
    }
}

/// The near-duplicate side of one draft: the items it asks for (sorted,
/// once), what a person already decided about it, and the window it looks
/// back over. The skeleton reads the open drafts with the other reads,
/// checks the lines, then [`settle`](Self::settle)s.
struct Asking {
    /// The item codes asked for, sorted and without repeats.
    codes: Vec<String>,
    check: Check,
    now: DateTime<Utc>,
    since: DateTime<Utc>,
}

impl Asking {
    /// The asking of `call` for a draft of `items`.
    fn of<'a>(call: &Call<'_>, items: impl IntoIterator<Item = &'a str>) -> Self {
        let now = call.clock.now();
        Self {
            codes: item_codes(items),
            check: Check::of(call.decision, call.near_duplicate_window),
            now,
            since: window_start(now, call.near_duplicate_window),
        }
    }

    /// The window to read the open drafts to compare with over: only when
    /// the check looks (no person decided yet, and a window is set).
    fn window(&self) -> Option<Window> {
        match self.check {
            Check::Look => Some(Window {
                since: self.since,
                now: self.now,
            }),
            Check::Skip | Check::UseExisting(_) => None,
        }
    }

    /// Once the lines are checked: the question when one of `open` already
    /// drafts the same items for `counterparty` (a `kind` document that
    /// `tool` reads), the existing draft when the person chose it (read by
    /// `chosen`), or `None`: go on and draft.
    async fn settle<O, Fut>(
        &self,
        call: &Call<'_>,
        open: &[OpenDraft],
        (counterparty, kind, tool): (&str, &str, &str),
        chosen: impl FnOnce(String) -> Fut,
    ) -> Result<Option<Draft<O>>, ToolError>
    where
        O: Reviewable,
        Fut: std::future::Future<Output = Result<O, ToolError>>,
    {
        let asked = self.codes.iter().map(String::as_str);
        if let Some(question) = near_duplicate(open, call.draft_key, asked, (counterparty, kind, tool), self.now) {
            return Err(question);
        }
        match &self.check {
            Check::UseExisting(number) => Ok(Some(existing(chosen(number.clone()).await?, call.review_pages))),
            Check::Look | Check::Skip => Ok(None),
        }
    }
}

/// The question for a person when one of `open` (drafted for
/// `counterparty`) already drafts the same `items`: nothing is created
/// until they decide. `None` when no open draft matches.
fn near_duplicate<'a>(
    open: &[OpenDraft],
    own_key: Option<&str>,
    items: impl IntoIterator<Item = &'a str> + Clone,
    (counterparty, kind, tool): (&str, &str, &str),
    now: DateTime<Utc>,
) -> Option<ToolError> {
    let existing = open
        .iter()
        .filter(|draft| own_key.is_none() || draft.key.as_deref() != own_key)
        .filter(|draft| draft.same_items(items.clone()))
        .max_by(|a, b| a.created_at.cmp(&b.created_at))?;
    let age = DateTime::parse_from_rfc3339(&existing.created_at)
        .map(|at| now.signed_duration_since(at.with_timezone(&Utc)))
        .map(|age| match age.num_minutes() {
            m if m < 1 => "just now".to_owned(),
            1 => "1 minute ago".to_owned(),
            m if m < 120 => format!("{m} minutes ago"),
            _ => format!("{} hours ago", age.num_hours()),
        })
        .unwrap_or_else(|_| "today".to_owned());
    let run = existing
        .agent_run
        .as_deref()
        .map(|run| format!(" from run {run}"))
        .unwrap_or_default();
    let summary = format!("{} from {counterparty}", existing.describe_lines());
    let prompt = format!(
        "{}{run}, {age}, already drafts {summary}. Create another draft anyway?",
        existing.number
    );
    let message = format!(
        "{prompt} Nothing was created: this looks like the same request again (for example a restarted agent \
         run), which an idempotency key cannot catch. Ask the person you act for: create another draft, or use \
         {number}. Their answer reaches draftline through your client, not through the arguments: an MCP \
         2026-07-28 client answers the elicitation; an MCP 2025-11-25 client resends this same call with \
         _meta[\"io.draftline/confirm\"] set to 'create-another <requestState>' or 'use-existing <requestState>'; \
         an HTTP caller resends this same call, same arguments, with the header \
         'Draftline-Confirm: create-another <requestState>' or 'Draftline-Confirm: use-existing <requestState>' \
         (requestState is in error.inputRequired). Do not work around it with a new key or client_ref. To read \
         the existing draft call {tool}.",
        number = existing.number,
    );
    Some(ToolError::InputRequired {
        message,
        question: Box::new(Question {
            existing: ExistingDraft {
                number: existing.number.clone(),
                kind: kind.to_owned(),
                agent_run: existing.agent_run.clone(),
                created_at: existing.created_at.clone(),
                summary,
            },
            prompt,
        }),
        request_state: None,
    })
}

/// A placed draft as the contract's prepared draft: the placement as the
/// backend made it, and the tool's answer for the document it becomes. An
/// atomic document is numbered already; an external one is numbered by the
/// ERP, and `numbered(draft, id, number, created_at)` makes the answer of
/// it. Either answer carries the document's `review_url` under
/// `review_pages`; `stakes` is what the draft commits the company to.
fn prepared<D, O>(
    placement: Placement<O>,
    draft: D,
    numbered: fn(&D, String, String, String) -> O,
    review_pages: &str,
    stakes: Stakes,
) -> Draft<O>
where
    D: Send + Sync + 'static,
    O: Reviewable + Send + Sync + 'static,
{
    let review_pages = review_pages.to_owned();
    match placement {
        Placement::Atomic { document, writes } => Draft::Placed {
            placement: Placement::Atomic {
                document: document.created(),
                writes,
            },
            answer: Box::new(move |_| Ok(document.with_review_url(&review_pages))),
            stakes,
        },
        Placement::External(external) => Draft::Placed {
            placement: Placement::External(external),
            answer: Box::new(move |created| {
                Ok(numbered(
                    &draft,
                    created.document.id.clone(),
                    created.document.number.clone(),
                    created.created_at.clone(),
                )
                .with_review_url(&review_pages))
            }),
            stakes,
        },
    }
}

/// The draft a person chose to keep instead of a new one (they answered
/// "use the existing one"): nothing is created, and it is the answer.
fn existing<O: Reviewable>(document: O, review_pages: &str) -> Draft<O> {
    Draft::Existing {
        document: document.document_ref(),
        output: document.with_review_url(review_pages),
    }
}

#[cfg(test)]
mod tests {
    //! The skeleton's rules, once for each kind from one table of cases, on
    //! the in-memory ERP. Each kind's own rules are tested in its tool.

    use std::str::FromStr;

    use draftline_contract::tool::DraftTool;

    use super::fixture::Fixture;
    use super::*;
    use crate::testing::{MemoryErp, Placing, TestCaller, issues};
    use crate::tools::purchasing_create_po_draft::PurchasingCreatePoDraft;
    use crate::tools::sales_create_quote_draft::SalesCreateQuoteDraft;

    /// Whose counterparty a case drafts for.
    #[derive(Clone, Copy)]
    enum Whose {
        /// One of the drafter's branch.
        Ours,
        /// One of another branch.
        Elsewhere,
        /// None at all.
        Nobodys,
    }

    /// What a refused line's message must be. `{verb}` stands for the
    /// kind's unit verb and `{hint}` for where it checks an item code.
    enum Says {
        /// Exactly this.
        Is(&'static str),
        /// At least this.
        Has(&'static str),
    }

    /// What a case comes to.
    enum Expect {
        /// Drafted, numbered next; its first line's price source ends so.
        Drafted { source: &'static str },
        /// Refused naming each `(path, message)`, in line order;
        /// `counterparty` stands for the kind's counterparty field.
        Refused(&'static [(&'static str, Says)]),
        /// A person is asked about the draft made first, made this long ago.
        Asks { ago: &'static str },
        /// An internal error with this message.
        Fails(&'static str),
    }

    struct Case {
        name: &'static str,
        whose: Whose,
        lines: Lines,
        /// A list price set first.
        price: Option<(&'static str, Uom, &'static str)>,
        /// A draft of these lines for the same counterparty made first
        /// under another key, this many minutes earlier.
        first: Option<(Lines, i64)>,
        /// Whether the near-duplicate check is on (a window is set).
        window: bool,
        expect: Expect,
    }

    /// A draft's lines: item, quantity, unit.
    type Lines = &'static [(&'static str, i64, Uom)];

    const BEARINGS: Lines = &[("BRG-0042", 2, Uom::Box)];

    /// A case of `lines` for the drafter's own counterparty, nothing first.
    const fn case(name: &'static str, lines: Lines, expect: Expect) -> Case {
        Case {
            name,
            whose: Whose::Ours,
            lines,
            price: None,
            first: None,
            window: true,
            expect,
        }
    }

    const CASES: &[Case] = &[
        case(
            "a draft of the branch's counterparty is priced from its list and numbered next",
            BEARINGS,
            Expect::Drafted {
                source: ", BRG-0042 per BOX",
            },
        ),
        case(
            "a unit the list does not price is its base price times the conversion",
            &[("BRG-0043", 1, Uom::Box)],
            Expect::Drafted {
                source: ", BRG-0043 per PCS x 24 (24 per BOX)",
            },
        ),
        Case {
            whose: Whose::Nobodys,
            ..case(
                "a counterparty that does not exist is refused",
                BEARINGS,
                Expect::Refused(&[("counterparty", Says::Has("X-99999 was not found"))]),
            )
        },
        Case {
            whose: Whose::Elsewhere,
            ..case(
                "another branch's counterparty reads like a missing one",
                BEARINGS,
                Expect::Refused(&[("counterparty", Says::Has("was not found"))]),
            )
        },
        case(
            "every refused line is named, in line order",
            &[
                ("BRG-0042", 1, Uom::Box),
                ("BRG-9999", 1, Uom::Pcs),
                ("BRG-0042", 1, Uom::Kg),
            ],
            Expect::Refused(&[
                (
                    "lines[1].item_code",
                    Says::Is("Item BRG-9999 does not exist. Check the code with {hint}."),
                ),
                (
                    "lines[2].uom",
                    Says::Is(
                        "Item BRG-0042 is not {verb} in KG. Allowed units for BRG-0042: PCS, BOX (1 BOX = 24 PCS). \
                         Resend the line with uom PCS or BOX.",
                    ),
                ),
            ]),
        ),
        Case {
            price: Some(("BRG-0042", Uom::Box, "999999999999.99")),
            ..case(
                "a line past the largest total is refused naming it",
                &[("BRG-0042", 1000, Uom::Box)],
                Expect::Refused(&[(
                    "lines[0]",
                    Says::Has("the largest total a draft may have, 99999999999999.99 IDR"),
                )]),
            )
        },
        Case {
            price: Some(("BRG-0042", Uom::Box, "10000000000000000000000000000")),
            ..case(
                "a price too large to multiply is a clear error, not a panic",
                &[("BRG-0042", 10, Uom::Box)],
                Expect::Fails(
                    "internal error: lines[0] (BRG-0042 x 10 BOX) is too large to compute exactly: a stored amount \
                     is wrong",
                ),
            )
        },
        Case {
            first: Some((BEARINGS, 30)),
            ..case(
                "the same items for the same counterparty under another key ask a person",
                &[("BRG-0042", 3, Uom::Pcs)],
                Expect::Asks { ago: "30 minutes ago" },
            )
        },
        Case {
            first: Some((BEARINGS, 0)),
            ..case(
                "other items for the same counterparty are not a near-duplicate",
                &[("BRG-0042", 2, Uom::Box), ("BRG-0043", 1, Uom::Box)],
                Expect::Drafted {
                    source: ", BRG-0042 per BOX",
                },
            )
        },
        Case {
            first: Some((BEARINGS, 25 * 60)),
            ..case(
                "a draft older than the window is not asked about",
                BEARINGS,
                Expect::Drafted {
                    source: ", BRG-0042 per BOX",
                },
            )
        },
        Case {
            first: Some((BEARINGS, 0)),
            window: false,
            ..case(
                "without a window no draft is asked about",
                BEARINGS,
                Expect::Drafted {
                    source: ", BRG-0042 per BOX",
                },
            )
        },
    ];

    /// Runs `case` for kind `K`: what it comes to, and that only a draft
    /// takes a number.
    async fn holds<K: Fixture>(case: &Case)
    where
        <K as DraftKind>::Output: serde::Serialize,
    {
        let erp = MemoryErp::demo().unwrap();
        let mut who = TestCaller::demo(K::DRAFTER).unwrap();
        if !case.window {
            who.near_duplicate_window = None;
        }
        let tool = K::tool(&erp);
        if let Some((item, uom, price)) = case.price {
            K::set_price(&erp, item, uom, Decimal::from_str(price).unwrap());
        }
        let (ours, elsewhere) = K::COUNTERPARTIES;
        let counterparty = match case.whose {
            Whose::Ours => ours,
            Whose::Elsewhere => elsewhere,
            Whose::Nobodys => "X-99999",
        };
        let mut first = None;
        if let Some((lines, minutes)) = case.first {
            let drafted = erp
                .drafted(&tool, &who.draft("k0"), K::input(counterparty, lines))
                .await;
            first = Some(drafted.identity().1.to_owned());
            who.clock.advance(chrono::Duration::minutes(minutes));
        }
        let last = || erp.read(|b| b.sequences[&(K::SERIES.0.to_owned(), K::SERIES.1.to_owned())]);
        let before = last();
        let drafted = DraftTool::draft(&tool, &who.draft("k1"), K::input(counterparty, case.lines)).await;
        let name = case.name;
        match (&case.expect, drafted) {
            (Expect::Drafted { source }, Ok(prepared)) => {
                let document = erp.complete(prepared).await.unwrap();
                let (_, number, _) = document.identity();
                let (series, prefix) = K::SERIES;
                assert_eq!(number, format!("{prefix}-{}-{:06}", &series[..3], before + 1), "{name}");
                let json = serde_json::to_value(&document).unwrap();
                assert_eq!(json["status"], "draft", "{name}");
                let priced = json["lines"][0]["price_source"].as_str().unwrap_or_default();
                assert!(priced.ends_with(source), "{name}: {priced}");
                assert_eq!(last(), before + 1, "{name}");
            }
            (Expect::Refused(expected), Err(err)) => {
                let found = issues(&err);
                assert_eq!(found.len(), expected.len(), "{name}: {err:?}");
                for ((path, message), (want_path, says)) in found.iter().zip(expected.iter()) {
                    let want_path = if *want_path == "counterparty" {
                        K::FIELD
                    } else {
                        want_path
                    };
                    assert_eq!(*path, want_path, "{name}");
                    let words =
                        |text: &str| (text.replace("{verb}", K::WORDS.unit_verb)).replace("{hint}", K::WORDS.item_hint);
                    match says {
                        Says::Is(text) => assert_eq!(*message, words(text), "{name}"),
                        Says::Has(text) => assert!(message.contains(&words(text)), "{name}: {message}"),
                    }
                }
                assert!(err.to_string().contains(NO_DRAFT), "{name}: {err}");
            }
            (
                Expect::Asks { ago },
                Err(ToolError::InputRequired {
                    question,
                    message,
                    request_state,
                }),
            ) => {
                let first = first.unwrap_or_default();
                let summary = format!("2 BOX of BRG-0042 from {counterparty}");
                let existing = &question.existing;
                assert_eq!(existing.number, first, "{name}");
                assert_eq!(existing.kind, <K as DraftKind>::Output::KIND.code(), "{name}");
                assert_eq!(existing.agent_run.as_deref(), Some("run-test"), "{name}");
                assert_eq!(existing.summary, summary, "{name}");
                assert_eq!(
                    question.prompt,
                    format!("{first} from run run-test, {ago}, already drafts {summary}. Create another draft anyway?"),
                    "{name}"
                );
                let read_back = format!("To read the existing draft call {}.", K::WORDS.read_tool);
                assert!(message.contains(&read_back), "{name}: {message}");
                assert_eq!(request_state, None, "{name}");
            }
            (Expect::Fails(text), Err(err)) => {
                assert!(matches!(err, ToolError::Internal(_)), "{name}: {err:?}");
                assert_eq!(err.to_string(), *text, "{name}");
            }
            (_, other) => panic!("{name}: {:?}", other.err()),
        }
        if !matches!(case.expect, Expect::Drafted { .. }) {
            assert_eq!(last(), before, "{name}: nothing was numbered");
        }
    }

    #[tokio::test]
    async fn every_case_holds_for_purchase_orders() {
        for case in CASES {
            holds::<PurchasingCreatePoDraft>(case).await;
        }
    }

    #[tokio::test]
    async fn every_case_holds_for_quotes() {
        for case in CASES {
            holds::<SalesCreateQuoteDraft>(case).await;
        }
    }

    /// For kind `K`: "create another" drafts again; "use the existing one"
    /// answers with the first draft, creating nothing.
    async fn a_persons_answer_is_kept<K: Fixture>()
    where
        <K as DraftKind>::Output: serde::Serialize,
    {
        let erp = MemoryErp::demo().unwrap();
        let who = TestCaller::demo(K::DRAFTER).unwrap();
        let tool = K::tool(&erp);
        let input = || K::input(K::COUNTERPARTIES.0, BEARINGS);
        let first = erp.drafted(&tool, &who.draft("k1"), input()).await;
        let first = first.identity().1.to_owned();
        let another = Decision::CreateAnother;
        let call = Call {
            decision: Some(&another),
            ..who.draft("k2")
        };
        let again = erp.drafted(&tool, &call, input()).await;
        assert_ne!(again.identity().1, first);
        let chosen = Decision::UseExisting(first.clone());
        let call = Call {
            decision: Some(&chosen),
            ..who.draft("k3")
        };
        let before = erp.read(|b| b.sequences.clone());
        let Ok(Draft::Existing { document, output }) = DraftTool::draft(&tool, &call, input()).await else {
            panic!("a person chose the existing draft")
        };
        assert_eq!(document, output.document_ref());
        assert_eq!(document.number, first);
        assert_eq!(document.kind, <K as DraftKind>::Output::KIND.code());
        let url = format!("https://draftline.test/review/documents/{first}");
        assert_eq!(output.identity().1, first);
        assert_eq!(serde_json::to_value(&output).unwrap()["review_url"], url.as_str());
        assert_eq!(erp.read(|b| b.sequences.clone()), before, "nothing was numbered");
    }

    #[tokio::test]
    async fn create_another_drafts_again_and_use_existing_answers_with_the_existing_draft() {
        a_persons_answer_is_kept::<PurchasingCreatePoDraft>().await;
        a_persons_answer_is_kept::<SalesCreateQuoteDraft>().await;
    }

    /// For kind `K` on an ERP that creates its own documents: the ERP
    /// numbers the draft and the answer carries that number; a retry under
    /// the same key after the ERP created it finds it rather than asking.
    async fn an_external_draft_is_found_again<K: Fixture>()
    where
        <K as DraftKind>::Output: serde::Serialize,
    {
        let erp = MemoryErp::demo().unwrap().placing(Placing::External);
        let who = TestCaller::demo(K::DRAFTER).unwrap();
        let tool = K::tool(&erp);
        let input = || K::input(K::COUNTERPARTIES.0, BEARINGS);
        let Ok(Draft::Placed {
            placement: Placement::External(external),
            answer,
            ..
        }) = DraftTool::draft(&tool, &who.draft("k1"), input()).await
        else {
            panic!("placed externally")
        };
        assert_eq!(external.find().await.unwrap(), None);
        let created = external.create().await.unwrap();
        let (series, prefix) = K::SERIES;
        let number = format!("{prefix}-{}-000004", &series[..3]);
        assert_eq!(created.document.number, number);
        let document = answer(&created).unwrap();
        assert_eq!(
            document.identity(),
            (
                created.document.id.as_str(),
                number.as_str(),
                created.created_at.as_str()
            )
        );
        let url = format!("https://draftline.test/review/documents/{number}");
        assert_eq!(serde_json::to_value(&document).unwrap()["review_url"], url.as_str());
        // The next worker with the same key: not a near-duplicate of itself.
        let again = erp.drafted(&tool, &who.draft("k1"), input()).await;
        assert_eq!(again.identity().1, number);
        // Another key is.
        let err = DraftTool::draft(&tool, &who.draft("k2"), input()).await.err();
        assert!(matches!(err, Some(ToolError::InputRequired { .. })), "{err:?}");
    }

    #[tokio::test]
    async fn an_external_draft_is_numbered_by_the_erp_and_a_retry_finds_it_rather_than_asking() {
        an_external_draft_is_found_again::<PurchasingCreatePoDraft>().await;
        an_external_draft_is_found_again::<SalesCreateQuoteDraft>().await;
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A draft kind under test, for the engine's table of cases and each
    //! kind's own tests: its tool over the in-memory ERP, who drafts it,
    //! its counterparties, how an input of it is written, and the calls
    //! every test makes.

    use std::str::FromStr;

    use draftline_contract::ToolError;
    use draftline_contract::tool::{Call, DraftTool};
    use rust_decimal::Decimal;

    use super::DraftKind;
    use crate::domain::TaxCode;
    use crate::testing::{MemoryErp, TestCaller};
    use crate::tools::purchasing_create_po_draft::{CreatePoDraftInput, PoLineInput, PurchasingCreatePoDraft};
    use crate::tools::sales_create_quote_draft::{CreateQuoteDraftInput, QuoteLineInput, SalesCreateQuoteDraft};
    use crate::units::Uom;

    /// A kind under test: its tool over the in-memory ERP, who drafts it,
    /// its counterparties, and how an input of it is written.
    pub(crate) trait Fixture:
        Sized + DraftKind + DraftTool<Input = <Self as DraftKind>::Input, Output = <Self as DraftKind>::Output>
    {
        /// The demo person who drafts it.
        const DRAFTER: &'static str;
        /// A counterparty of the drafter's branch, and one of another branch.
        const COUNTERPARTIES: (&'static str, &'static str);
        /// The input field that names the counterparty.
        const FIELD: &'static str;
        /// The branch's number series.
        const SERIES: (&'static str, &'static str);
        fn tool(erp: &MemoryErp) -> Self;
        fn input(counterparty: &str, lines: &[(&str, i64, Uom)]) -> <Self as DraftKind>::Input;
        /// Sets the counterparty's list price of `item` per `uom`.
        fn set_price(erp: &MemoryErp, item: &str, uom: Uom, price: Decimal);

        /// The demo ERP and the drafter.
        fn drafter() -> (MemoryErp, TestCaller) {
            (MemoryErp::demo().unwrap(), TestCaller::demo(Self::DRAFTER).unwrap())
        }

        /// The draft, placed as the server would place it.
        async fn created(
            erp: &MemoryErp,
            call: &Call<'_>,
            input: <Self as DraftKind>::Input,
        ) -> <Self as DraftKind>::Output {
            erp.drafted(&Self::tool(erp), call, input).await
        }

        /// Why the draft was refused.
        async fn refused(erp: &MemoryErp, call: &Call<'_>, input: <Self as DraftKind>::Input) -> ToolError {
            erp.refusal(&Self::tool(erp), call, input).await
        }

        /// The last number of the drafter's series.
        fn last_number(erp: &MemoryErp) -> i64 {
            let (branch, prefix) = Self::SERIES;
            erp.read(|b| b.sequences[&(branch.to_owned(), prefix.to_owned())])
        }

        /// Sets the list price as [`Self::set_price`], from text.
        fn set_price_of(erp: &MemoryErp, item: &str, uom: Uom, price: &str) {
            Self::set_price(erp, item, uom, Decimal::from_str(price).unwrap());
        }
    }

    impl Fixture for PurchasingCreatePoDraft {
        const DRAFTER: &'static str = "buyer-sby";
        const COUNTERPARTIES: (&'static str, &'static str) = ("V-00231", "V-00612");
        const FIELD: &'static str = "vendor_code";
        const SERIES: (&'static str, &'static str) = ("SBY-01", "PO");
        fn tool(erp: &MemoryErp) -> Self {
            Self::new(erp.port())
        }
        fn input(vendor_code: &str, lines: &[(&str, i64, Uom)]) -> CreatePoDraftInput {
            let line = |&(item_code, qty, uom): &(&str, i64, Uom)| PoLineInput {
                item_code: item_code.into(),
                qty,
                uom,
            };
            CreatePoDraftInput {
                vendor_code: vendor_code.into(),
                needed_by: "2026-12-15".parse().unwrap(),
                client_ref: "engine".into(),
                note: None,
                lines: lines.iter().map(line).collect(),
            }
        }
        fn set_price(erp: &MemoryErp, item: &str, uom: Uom, price: Decimal) {
            erp.edit(|b| {
                for p in b.prices.iter_mut().filter(|p| p.item == item && p.uom == uom) {
                    p.unit_price = price;
                }
            });
        }
    }

    impl Fixture for SalesCreateQuoteDraft {
        const DRAFTER: &'static str = "sales-bdg";
        const COUNTERPARTIES: (&'static str, &'static str) = ("C-BDG-001", "C-SBY-001");
        const FIELD: &'static str = "customer_code";
        const SERIES: (&'static str, &'static str) = ("BDG-01", "QT");
        fn tool(erp: &MemoryErp) -> Self {
            Self::new(erp.port())
        }
        fn input(customer_code: &str, lines: &[(&str, i64, Uom)]) -> CreateQuoteDraftInput {
            let line = |&(item_code, qty, uom): &(&str, i64, Uom)| QuoteLineInput {
                item_code: item_code.into(),
                qty,
                uom,
                tax_code: Some(TaxCode::Vat11),
            };
            CreateQuoteDraftInput {
                customer_code: customer_code.into(),
                valid_until: "2026-12-15".parse().unwrap(),
                client_ref: "engine".into(),
                note: None,
                lines: lines.iter().map(line).collect(),
            }
        }
        fn set_price(erp: &MemoryErp, item: &str, uom: Uom, price: Decimal) {
            erp.edit(|b| {
                for p in b.list_prices.iter_mut().filter(|p| p.item == item && p.uom == uom) {
                    p.unit_price = price;
                }
            });
        }
    }
}
