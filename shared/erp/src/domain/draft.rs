//! A draft before the ERP numbers it, whatever its kind: what every draft
//! has, once. A kind's own types (`po.rs`, `quote.rs`) say only what
//! differs: its counterparty as printed, its line, its own fields.

use crate::money::Money;

/// A document an agent drafted, priced and checked, not yet in the ERP:
/// the ERP gives it its id, number and time when it is placed. `C` is its
/// counterparty as printed on it, `L` its line, `K` what only its kind has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftDocument<C, L, K> {
    /// The branch it belongs to.
    pub branch_id: String,
    /// The vendor or customer.
    pub counterparty: C,
    /// Currency of every amount.
    pub currency: String,
    /// The priced lines.
    pub lines: Vec<L>,
    /// Sum of the lines' net amounts.
    pub subtotal: Money,
    /// Total of the document.
    pub total: Money,
    /// Free-text note from the caller.
    pub note: Option<String>,
    /// The caller's own reference.
    pub client_ref: String,
    /// The agent run that drafted it (`X-Agent-Run-Id`), if any.
    pub drafted_by_agent_run: Option<String>,
    /// The person the agent acted for (token subject).
    pub drafted_on_behalf_of: String,
    /// The executor's tool-call id (`X-Tool-Call-Id`), if any.
    pub drafted_by_tool_call: Option<String>,
    /// What only its kind has.
    pub own: K,
}
