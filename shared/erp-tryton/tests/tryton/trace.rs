//! The call's trace goes on to Tryton: every request a call makes carries a
//! `traceparent` naming a span of its own in the call's trace, as trytond
//! receives it (read in front of it, by the proxy), and the call records
//! each request with that span id.

use std::collections::BTreeSet;

use draftline_erp::port::{Inventory, Purchasing};
use draftline_erp_tryton::TrytonErp;
use draftline_http::trace::{CallRecorder, TraceContext};

use crate::helpers::{branch, shared};
use crate::proxy::Proxy;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn every_tryton_request_of_a_call_carries_its_trace_as_a_span_of_its_own() {
    let db = shared();
    let (proxy, settings) = Proxy::before(&db.settings).await;
    let erp = TrytonErp::new(&settings).unwrap();
    let sby = branch("SBY-01");

    let call = CallRecorder::new(TraceContext::continued(Some(TRACEPARENT), Some("rojo=00f067aa0ba902b7")).unwrap());
    call.run(async {
        erp.item_stock(&sby.scope(), "BRG-0042").await.unwrap();
        assert!(
            erp.purchase_order(&sby.scope(), "PO-SBY-000001")
                .await
                .unwrap()
                .is_some()
        );
    })
    .await;
    let received = proxy.traceparents();
    let recorded = call.recorded();
    assert!(!received.is_empty());
    assert_eq!(
        received.len() as u64,
        erp.requests(),
        "every request passed the proxy once"
    );
    assert_eq!(
        recorded.requests.len(),
        received.len(),
        "each request is recorded once: {recorded:?}"
    );
    // Each request is its own span of the caller's trace, and the span id
    // Tryton received is the one the call recorded.
    let spans: BTreeSet<String> = recorded
        .requests
        .iter()
        .map(|r| {
            assert_eq!(r.system, "tryton");
            assert!(r.answered && r.operation.starts_with("GET "), "{r:?}");
            format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01", hex::encode(r.span_id))
        })
        .collect();
    let got: BTreeSet<String> = received.iter().map(|t| t.clone().expect("a traceparent")).collect();
    assert_eq!(got, spans);
    assert_eq!(spans.len(), received.len(), "no span id twice");

    // Outside any call (no trace to continue) a request carries none.
    erp.item(&sby.scope(), "BRG-0043").await.unwrap();
    assert_eq!(proxy.traceparents().last(), Some(&None));
}
