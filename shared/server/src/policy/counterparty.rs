//! The counterparty rule: agents draft only for the vendors and customers
//! the tenant's policy lists (when it lists any). It is checked once the
//! draft is prepared and before anything is written, on either backend: a
//! draft for the ERP is refused before the ERP is asked to create it.

use draftline_contract::error::{ReachedLimit, ToolError};
use draftline_contract::policy::Applied;
use draftline_contract::tool::{CounterpartyKind, Stakes};

/// The refusal of a draft for a counterparty outside the allow-list that
/// applies to it; `None` when it may be drafted.
pub fn outside(applied: &Applied, stakes: &Stakes) -> Option<ToolError> {
    let counterparty = stakes.counterparty.as_ref()?;
    let (allowed, kind, field) = match counterparty.kind {
        CounterpartyKind::Vendor => (applied.vendors.as_ref()?, "vendor", "counterparties.vendors"),
        CounterpartyKind::Customer => (applied.customers.as_ref()?, "customer", "counterparties.customers"),
    };
    if allowed.contains(&counterparty.code) {
        return None;
    }
    let code = &counterparty.code;
    let limit = ReachedLimit {
        name: field.to_owned(),
        unit: kind.to_owned(),
        applies_to: format!("{kind} {code}"),
        max: None,
        used: None,
        this_call: code.clone(),
        resets_at: None,
        policy_version: applied.version,
    };
    let message = format!(
        "Agents may not draft for {kind} {code}: it is not on the list of {kind}s the tenant's policy (version \
         {version}, {field}) allows agents to draft for in your branch. No draft was created. Do not retry it \
         and do not switch to another {kind} on your own: tell the person you act for, and ask a person to draft \
         this one.",
        version = applied.version,
    );
    Some(ToolError::LimitReached {
        message,
        limit: Box::new(limit),
        retry_after_seconds: None,
    })
}
