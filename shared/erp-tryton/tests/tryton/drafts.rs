//! Drafts created in Tryton by the real draft tools: one document per key
//! (Tryton itself refuses a second), read back through Tryton's own REST
//! and through the adapter exactly as the tool answered.

use std::sync::Arc;

use draftline_contract::tool::Draft;
use draftline_contract::{DraftTool, ErrorCode};
use draftline_erp::demo;
use draftline_erp::domain::{DocumentKind, PurchaseOrder, Quote, TaxCode};
use draftline_erp::port::{Drafting, Erp, PoFilter, Purchasing, Sales};
use draftline_erp::tools::purchasing_create_po_draft::{CreatePoDraftInput, PoLineInput, PurchasingCreatePoDraft};
use draftline_erp::tools::sales_create_quote_draft::{CreateQuoteDraftInput, QuoteLineInput, SalesCreateQuoteDraft};
use draftline_erp::units::Uom;
use draftline_erp_tryton::TrytonErp;
use serde_json::json;

use crate::helpers::{Context, bdg_quote, branch, in_days, own, sby_po, shared};

pub fn po_input(client_ref: &str) -> CreatePoDraftInput {
    CreatePoDraftInput {
        vendor_code: "V-00231".into(),
        needed_by: in_days(14),
        client_ref: client_ref.into(),
        note: Some("Reorder for the SBY line".into()),
        lines: vec![
            PoLineInput {
                item_code: "BRG-0042".into(),
                qty: 10,
                uom: Uom::Box,
            },
            PoLineInput {
                item_code: "BRG-0043".into(),
                qty: 30,
                uom: Uom::Pcs,
            },
        ],
    }
}

/// A prepared draft of a document in Tryton: the document, and the tool's
/// answer for it once created.
pub struct External<O> {
    document: Box<dyn draftline_contract::tool::ExternalDocument>,
    answer: Option<draftline_contract::tool::Answer<O>>,
}

impl<O> External<O> {
    /// The external placement of `draft` (a Tryton draft always is one).
    pub fn of(draft: Draft<O>) -> Self {
        match draft {
            Draft::Placed {
                placement: draftline_contract::tool::Placement::External(document),
                answer,
                ..
            } => Self {
                document,
                answer: Some(answer),
            },
            _ => panic!("a Tryton draft is external"),
        }
    }

    pub async fn find(&self) -> Result<Option<draftline_contract::tool::Created>, draftline_contract::ToolError> {
        self.document.find().await.map_err(Into::into)
    }

    pub async fn create(&self) -> Result<draftline_contract::tool::Created, draftline_contract::ToolError> {
        self.document.create().await.map_err(Into::into)
    }

    /// The tool's answer for `created` (once).
    pub fn output(&mut self, created: &draftline_contract::tool::Created) -> Result<O, draftline_contract::ToolError> {
        (self.answer.take().expect("one answer per draft"))(created)
    }
}

/// The external draft the PO tool prepares for `input` under `key`.
pub async fn prepared_po(erp: &Arc<TrytonErp>, key: &str, input: CreatePoDraftInput) -> External<PurchaseOrder> {
    let tool = PurchasingCreatePoDraft::new(erp.clone() as Arc<dyn Erp>);
    let ctx = Context::new(branch("SBY-01"), "run-7f3a", Some(key));
    External::of(tool.draft(&ctx.call(), input).await.unwrap())
}

#[tokio::test]
async fn a_po_draft_is_created_once_in_tryton_as_a_draft_with_its_provenance() {
    let db = own();
    let erp = Arc::new(db.erp());
    let sby = branch("SBY-01");
    let key = "dl1-test-po-001";
    let number = sby_po(1);
    let mut external = prepared_po(&erp, key, po_input("reorder-BRG-0042")).await;
    assert_eq!(external.find().await.unwrap(), None, "nothing has this key yet");
    let before = erp.requests();
    let created = external.create().await.unwrap();
    assert_eq!(erp.requests() - before, 1, "a create is one request");
    assert_eq!(created.document.number, number);
    assert_eq!(created.document.kind, "purchase_order");
    assert!(created.document.id.starts_with("po_tryton_"), "{}", created.document.id);
    let answered = external.output(&created).unwrap();
    assert!(
        answered
            .review_url
            .as_deref()
            .is_some_and(|url| url.ends_with(&format!("/review/documents/{number}")))
    );
    // The adapter knows nothing of review pages: the tool adds the link.
    let answered = PurchaseOrder {
        review_url: None,
        ..answered
    };
    assert_eq!(answered.total.amount, "3307500.00");
    assert_eq!(answered.lines[0].price_source, "price list V-00231, BRG-0042 per BOX");

    // The adapter reads back exactly what the tool answered.
    let read = erp.purchase_order(&sby.scope(), &number).await.unwrap().unwrap();
    assert_eq!(read, answered);
    let listed = erp
        .search_purchase_orders(&sby.scope(), &PoFilter::default(), None, 20, 5)
        .await
        .unwrap();
    // Highest number first: the new draft, then the demo's agent drafts.
    assert_eq!(listed.items.first(), Some(&answered));
    assert_eq!(listed.items.len(), 1 + demo::agent_purchase_orders().len());
    // Jakarta does not see it.
    assert_eq!(
        erp.purchase_order(&branch("JKT-01").scope(), &number).await.unwrap(),
        None
    );

    // Tryton's own REST, not the adapter: a draft with its key, provenance, lines, units and prices.
    let found = db
        .raw_search(
            "purchase.purchase",
            json!([["draftline_key", "=", key]]),
            &[
                "number",
                "state",
                "draftline_key",
                "draftline_client_ref",
                "drafted_by_agent_run",
                "drafted_on_behalf_of",
                "drafted_by_tool_call",
                "drafted_by_agent",
                "warehouse.code",
                "party.code",
                "comment",
                "total_amount",
                "lines.product.code",
                "lines.quantity",
                "lines.unit.symbol",
                "lines.unit_price",
                "lines.note",
            ],
        )
        .await;
    assert_eq!(found.len(), 1);
    let po = &found[0];
    assert_eq!(po["state"], "draft");
    assert_eq!(po["number"], number.as_str());
    assert_eq!(po["draftline_key"], key);
    assert_eq!(po["draftline_client_ref"], "reorder-BRG-0042");
    assert_eq!(po["drafted_by_agent_run"], "run-7f3a");
    assert_eq!(po["drafted_on_behalf_of"], "tester");
    assert_eq!(po["drafted_by_tool_call"], "run-7f3a-call-1");
    assert_eq!(po["drafted_by_agent"], true);
    assert_eq!(po["warehouse"]["code"], "SBY-01");
    assert_eq!(po["party"]["code"], "V-00231");
    assert_eq!(po["comment"], "Reorder for the SBY line");
    assert_eq!(po["total_amount"]["decimal"], "3307500.00");
    let lines: Vec<(String, f64, String, String, String)> = po["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["product"]["code"].as_str().unwrap().to_owned(),
                l["quantity"].as_f64().unwrap(),
                l["unit"]["symbol"].as_str().unwrap().to_owned(),
                l["unit_price"]["decimal"].as_str().unwrap().to_owned(),
                l["note"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "BRG-0042".to_owned(),
                10.0,
                "BOX24".to_owned(),
                "288000.00".to_owned(),
                "price list V-00231, BRG-0042 per BOX".to_owned()
            ),
            (
                "BRG-0043".to_owned(),
                30.0,
                "u".to_owned(),
                "14250.00".to_owned(),
                "price list V-00231, BRG-0043 per PCS".to_owned()
            ),
        ]
    );

    // Tryton itself refuses a second document with the key.
    let (status, body) = db
        .raw(
            "POST",
            "purchase.purchase",
            None,
            &["number"],
            Some(&json!({"party": 2, "warehouse": 12, "draftline_key": key,
                         "lines": [["create", [{"product": 1, "quantity": 1, "unit": 1, "unit_price": 12500}]]]})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["message"],
        "A document with this draftline key already exists in the company."
    );

    // A second create with the key (a worker whose lease lapsed) answers the same document.
    let again = external.create().await.unwrap();
    assert_eq!(again, created);
    assert_eq!(external.find().await.unwrap(), Some(created.clone()));
    let with_key = db
        .raw_search("purchase.purchase", json!([["draftline_key", "=", key]]), &["id"])
        .await;
    assert_eq!(with_key.len(), 1, "one record in Tryton");

    // The near-duplicate check sees the open draft.
    let open = erp
        .open_drafts(
            &sby.scope(),
            DocumentKind::PurchaseOrder,
            "V-00231",
            chrono::Utc::now() - chrono::Duration::hours(1),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].number, number);
    assert_eq!(open[0].agent_run.as_deref(), Some("run-7f3a"));
    assert_eq!(open[0].created_at, created.created_at);
    assert_eq!(open[0].describe_lines(), "10 BOX of BRG-0042 and 30 PCS of BRG-0043");
    assert!(
        erp.open_drafts(
            &sby.scope(),
            DocumentKind::PurchaseOrder,
            "V-00415",
            chrono::Utc::now() - chrono::Duration::hours(1),
            chrono::Utc::now()
        )
        .await
        .unwrap()
        .is_empty()
    );
    let tool = PurchasingCreatePoDraft::new(erp.clone() as Arc<dyn Erp>);
    let mut ctx = Context::new(branch("SBY-01"), "run-8a1b", Some("dl1-test-po-002"));
    ctx.window = Some(std::time::Duration::from_secs(3600));
    let asked = tool.draft(&ctx.call(), po_input("reorder-again")).await.err().unwrap();
    assert_eq!(asked.code(), ErrorCode::InputRequired);
    assert!(asked.to_string().contains(&number), "{asked}");
}

#[tokio::test]
async fn concurrent_creates_with_one_key_make_one_document() {
    let db = own();
    let erp = Arc::new(db.erp());
    let key = "dl1-test-race";
    let external = prepared_po(&erp, key, po_input("race")).await;
    let results = futures::future::join_all((0..6).map(|_| external.create())).await;
    let created: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert!(created.iter().all(|c| c == &created[0]), "{created:?}");
    let with_key = db
        .raw_search("purchase.purchase", json!([["draftline_key", "=", key]]), &["number"])
        .await;
    assert_eq!(with_key.len(), 1);
    assert_eq!(with_key[0]["number"], created[0].document.number.as_str());
    // A different key is a different draft, numbered next.
    let other = prepared_po(&erp, "dl1-test-race-2", po_input("race-2")).await;
    let second = other.create().await.unwrap();
    assert_ne!(second.document.id, created[0].document.id);
    assert_eq!(created[0].document.number, sby_po(1));
    assert_eq!(second.document.number, sby_po(2));
}

#[tokio::test]
async fn a_quote_draft_is_created_with_its_taxes_and_reads_back_as_answered() {
    let db = own();
    let erp = Arc::new(db.erp());
    let bdg = branch("BDG-01");
    let key = "dl1-test-qt-001";
    let number = bdg_quote(1);
    let tool = SalesCreateQuoteDraft::new(erp.clone() as Arc<dyn Erp>);
    let ctx = Context::new(branch("BDG-01"), "run-9b1c", Some(key));
    let input = CreateQuoteDraftInput {
        customer_code: "C-BDG-001".into(),
        valid_until: in_days(30),
        client_ref: "quote-tekstil-1".into(),
        note: None,
        lines: vec![
            QuoteLineInput {
                item_code: "BRG-0042".into(),
                qty: 2,
                uom: Uom::Box,
                tax_code: Some(TaxCode::Vat11),
            },
            QuoteLineInput {
                item_code: "CBL-0220".into(),
                qty: 100,
                uom: Uom::M,
                tax_code: Some(TaxCode::Vat0),
            },
        ],
    };
    let mut external = External::of(tool.draft(&ctx.call(), input).await.unwrap());
    let before = erp.requests();
    let created = external.create().await.unwrap();
    assert_eq!(erp.requests() - before, 1);
    assert_eq!(created.document.number, number);
    assert_eq!(created.document.kind, "quote");
    assert!(created.document.id.starts_with("qt_tryton_"));
    let answered: Quote = external.output(&created).unwrap();
    assert!(answered.review_url.is_some());
    let answered = Quote {
        review_url: None,
        ..answered
    };
    assert_eq!(
        (
            answered.subtotal.amount.as_str(),
            answered.tax_total.amount.as_str(),
            answered.total.amount.as_str()
        ),
        ("2880000.00", "74800.00", "2954800.00")
    );
    let read = erp.quote(&bdg.scope(), &number).await.unwrap().unwrap();
    assert_eq!(read, answered);
    assert_eq!(erp.quote(&branch("SBY-01").scope(), &number).await.unwrap(), None);

    let found = db
        .raw_search(
            "sale.sale",
            json!([["draftline_key", "=", key]]),
            &[
                "state",
                "number",
                "drafted_by_agent_run",
                "drafted_on_behalf_of",
                "price_list.name",
                "quotation_expire",
                "description",
                "total_amount",
                "lines.taxes.name",
                "lines.unit.symbol",
            ],
        )
        .await;
    assert_eq!(found.len(), 1);
    let sale = &found[0];
    assert_eq!(sale["state"], "draft");
    assert_eq!(sale["drafted_by_agent_run"], "run-9b1c");
    assert_eq!(sale["price_list"]["name"], "PL-WHOLESALE");
    assert_eq!(sale["total_amount"]["decimal"], "2954800.00");
    assert_eq!(sale["description"], answered.credit_check.as_str());
    let expire = &sale["quotation_expire"];
    let valid_until = in_days(30);
    assert_eq!(
        format!(
            "{:04}-{:02}-{:02}",
            expire["year"].as_i64().unwrap(),
            expire["month"].as_i64().unwrap(),
            expire["day"].as_i64().unwrap()
        ),
        valid_until.to_string()
    );
    let taxes: Vec<&str> = sale["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["taxes"][0]["name"].as_str().unwrap())
        .collect();
    assert_eq!(taxes, ["VAT11", "VAT0"]);
    let open = erp
        .open_drafts(
            &bdg.scope(),
            DocumentKind::Quote,
            "C-BDG-001",
            chrono::Utc::now() - chrono::Duration::hours(1),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(
        open.iter().map(|d| d.number.as_str()).collect::<Vec<_>>(),
        [number.as_str()]
    );
}

#[tokio::test]
async fn a_draft_without_its_key_is_refused_before_anything_is_written() {
    let db = shared();
    let erp = Arc::new(db.erp());
    let tool = PurchasingCreatePoDraft::new(erp.clone() as Arc<dyn Erp>);
    let ctx = Context::new(branch("SBY-01"), "run-nokey", None);
    let refused = tool.draft(&ctx.call(), po_input("no-key")).await.err().unwrap();
    assert_eq!(refused.code(), ErrorCode::InternalError);
    let none = db
        .raw_search(
            "purchase.purchase",
            json!([["draftline_client_ref", "=", "no-key"]]),
            &["id"],
        )
        .await;
    assert!(none.is_empty());
    let sby = db
        .raw_search("purchase.purchase", json!([["warehouse.code", "=", "SBY-01"]]), &["id"])
        .await;
    assert_eq!(sby.len(), demo::agent_purchase_orders().len(), "only the demo's drafts");
}
