//! The review queue over Tryton (`Review::agent_drafts`): the demo
//! database holds the agents' drafts of the days before in every status,
//! as the built-in backend seeds them, each as Tryton's workflow says it.

use draftline_erp::demo;
use draftline_erp::domain::{AgentDraft, DecidedDraft, DocumentKind, DraftFilter, Reviewable};
use draftline_erp::port::Review;

use crate::helpers::{branch, shared};

/// A seeded agent draft as Tryton's queue lists it: its Tryton id, the
/// decision as far as Tryton tells it (the status, who last changed it and
/// when; no reason), and a rejected purchase order is a cancelled one
/// (Tryton has no rejected purchases; a rejected quote is a cancelled
/// sale, read as rejected).
fn as_tryton(mut want: AgentDraft, read: &AgentDraft) -> AgentDraft {
    let prefix = match want.kind {
        DocumentKind::PurchaseOrder => "po_tryton_",
        DocumentKind::Quote => "qt_tryton_",
    };
    assert!(read.id.starts_with(prefix), "{}", read.id);
    want.id = read.id.clone();
    if let Some(decision) = want.decision.as_mut() {
        decision.reason = None;
    }
    if want.kind == DocumentKind::PurchaseOrder && want.status == "rejected" {
        want.status = "cancelled".to_owned();
    }
    want
}

#[tokio::test]
async fn the_demo_queue_holds_the_agents_drafts_in_every_status_newest_first() {
    let erp = shared().erp();
    let all = DraftFilter::default();

    let sby = erp
        .agent_drafts(&branch("SBY-01").scope(), &all, None, 20)
        .await
        .unwrap();
    let want: Vec<AgentDraft> = demo::agent_purchase_orders()
        .iter()
        .map(|(po, _)| po.queue_entry())
        .collect();
    assert_eq!(sby.items.len(), want.len(), "{:?}", sby.items);
    assert_eq!(sby.next_after, None);
    for (read, want) in sby.items.iter().zip(want) {
        assert_eq!(read, &as_tryton(want, read));
    }
    let statuses: Vec<&str> = sby.items.iter().map(|d| d.status.as_str()).collect();
    assert_eq!(statuses, ["draft", "approved", "cancelled"]);

    let bdg = erp
        .agent_drafts(&branch("BDG-01").scope(), &all, None, 20)
        .await
        .unwrap();
    let want: Vec<AgentDraft> = demo::agent_quotes().iter().map(|(q, _)| q.queue_entry()).collect();
    assert_eq!(bdg.items.len(), want.len(), "{:?}", bdg.items);
    for (read, want) in bdg.items.iter().zip(want) {
        assert_eq!(read, &as_tryton(want, read));
    }
    let statuses: Vec<&str> = bdg.items.iter().map(|d| d.status.as_str()).collect();
    assert_eq!(statuses, ["draft", "approved", "rejected"]);

    // Jakarta's orders were made by people: not in its queue.
    let jkt = erp
        .agent_drafts(&branch("JKT-01").scope(), &all, None, 20)
        .await
        .unwrap();
    assert!(jkt.items.is_empty(), "{:?}", jkt.items);
}

#[tokio::test]
async fn the_demo_queue_filters_by_status_and_kind_and_pages() {
    let erp = shared().erp();
    let sby = branch("SBY-01");
    let numbers = |drafts: &[AgentDraft]| drafts.iter().map(|d| d.number.clone()).collect::<Vec<_>>();
    for (status, want) in [
        ("draft", vec!["PO-SBY-000001"]),
        ("approved", vec!["PO-SBY-000002"]),
        ("cancelled", vec!["PO-SBY-000003"]),
        ("rejected", vec![]),
    ] {
        let filter = DraftFilter {
            status: Some(status.to_owned()),
            ..DraftFilter::default()
        };
        let page = erp.agent_drafts(&sby.scope(), &filter, None, 20).await.unwrap();
        assert_eq!(numbers(&page.items), want, "{status}");
    }
    let quotes = DraftFilter {
        kind: Some(DocumentKind::Quote),
        status: Some("rejected".to_owned()),
    };
    let page = erp
        .agent_drafts(&branch("BDG-01").scope(), &quotes, None, 20)
        .await
        .unwrap();
    assert_eq!(numbers(&page.items), ["QT-BDG-000003"]);

    // Two to a page: newest first, then the rest.
    let all = DraftFilter::default();
    let first = erp.agent_drafts(&sby.scope(), &all, None, 2).await.unwrap();
    assert_eq!(numbers(&first.items), ["PO-SBY-000001", "PO-SBY-000002"]);
    let rest = erp
        .agent_drafts(&sby.scope(), &all, first.next_after.as_deref(), 2)
        .await
        .unwrap();
    assert_eq!(numbers(&rest.items), ["PO-SBY-000003"]);
    assert_eq!(rest.next_after, None);
}

/// The decisions people made in Tryton, as a poller asks for them: oldest
/// change first, and never more than asked across both kinds. Each kind's
/// search stops at the number asked; told more, a poller that moves its
/// watermark to the last change it was told would skip the other kind's
/// changes between (the demo has two decided drafts of each kind).
#[tokio::test]
async fn decisions_made_in_tryton_come_oldest_first_and_no_more_than_asked_of_both_kinds() {
    let erp = shared().erp();
    let tenant = draftline_contract::identity::TenantId::parse("demo").unwrap();
    let all = erp.decided_since(&tenant, None, 100).await.unwrap();
    let kinds: Vec<DocumentKind> = all.iter().map(|found| found.draft.kind).collect();
    assert_eq!(kinds.len(), 4, "{all:?}");
    assert!(kinds.contains(&DocumentKind::PurchaseOrder) && kinds.contains(&DocumentKind::Quote));
    let order = |found: &DecidedDraft| (found.changed_at, found.draft.number.clone());
    assert!(all.windows(2).all(|pair| order(&pair[0]) <= order(&pair[1])), "{all:?}");
    for limit in 1..=all.len() {
        let first = erp.decided_since(&tenant, None, limit).await.unwrap();
        let numbers = |found: &[DecidedDraft]| found.iter().map(|f| f.draft.number.clone()).collect::<Vec<_>>();
        assert_eq!(numbers(&first), numbers(&all[..limit]), "limit {limit}");
    }
    // From the last change on, the last change (a watermark is inclusive).
    let last = all.last().unwrap();
    let since = erp.decided_since(&tenant, Some(last.changed_at), 100).await.unwrap();
    assert!(
        since.iter().any(|found| found.draft.number == last.draft.number),
        "{since:?}"
    );
}
