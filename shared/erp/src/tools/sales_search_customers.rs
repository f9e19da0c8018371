//! `sales_search_customers`: customers of the caller's branch by name or code.

use async_trait::async_trait;
use draftline_contract::ToolError;
use draftline_contract::cursor::CursorScope;
use draftline_contract::tool::{Call, ReadTool, ToolMeta, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::domain::Customer;
use crate::money::Money;
use crate::port::{Page, Scope};

/// The page size when `limit` is null.
const DEFAULT_LIMIT: u32 = 10;

/// Input of `sales_search_customers`.
#[derive(Debug, Clone, Serialize, Deserialize, Validate, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCustomersInput {
    /// A customer code (C-BDG-001) or part of a customer name (tekstil), case-insensitive; null lists every customer of your branch.
    #[validate(custom(function = "super::search_text"))]
    #[schemars(pattern(super::SEARCH_TEXT_PATTERN))]
    #[schemars(length(min = 1, max = 64))]
    pub query: Option<String>,
    /// Customers per page, 1-50; null for 10.
    #[validate(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// null for the first page; otherwise next_cursor from the previous answer, unchanged.
    #[validate(custom(function = "super::cursor"))]
    #[schemars(pattern(super::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// The filters a cursor is bound to.
#[derive(Debug, Serialize)]
struct Filters {
    query: Option<String>,
}

/// Where a listing continues (inside the sealed cursor).
#[derive(Debug, Serialize, Deserialize)]
struct Position {
    after_customer: String,
}

/// One customer found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerMatch {
    /// Customer code: pass it to sales_get_customer_summary or sales_create_quote_draft.
    pub code: String,
    /// Name.
    pub name: String,
    /// City.
    pub city: String,
    /// The price list its quotes are priced from.
    pub price_list: String,
    /// Its credit limit.
    pub credit_limit: Money,
    /// Payment terms in days.
    pub payment_terms_days: i64,
    /// Exempt from VAT (its quote lines use tax code EXEMPT).
    pub tax_exempt: bool,
    /// Why it is on credit hold (no quotes can be drafted), or null.
    pub credit_hold: Option<String>,
}

/// Output of `sales_search_customers`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCustomersOutput {
    /// The caller's branch; other branches' customers are never included.
    pub branch_id: String,
    /// Matching customers, by code.
    pub customers: Vec<CustomerMatch>,
    /// Pass this back as cursor for the next page; null when this is the last page.
    pub next_cursor: Option<String>,
}

super::erp_tool!(SalesSearchCustomers);

impl ToolSpec for SalesSearchCustomers {
    type Input = SearchCustomersInput;
    type Output = SearchCustomersOutput;
    const META: ToolMeta = ToolMeta {
        name: "sales_search_customers",
        title: "Search customers",
        description: "Finds customers of your branch by customer code or part of the name. With query null every \
customer of your branch is listed; customers of other branches are never returned. Returns each customer's code, \
name, city, price list, credit limit, payment terms, tax exemption and credit hold, by code, at most limit per page \
(1-50, default 10); pass next_cursor back as cursor for the next page. For a customer's credit exposure, open orders \
and overdue invoices call sales_get_customer_summary; to quote call sales_create_quote_draft. \
Example: {\"query\": \"tekstil\", \"limit\": 10, \"cursor\": null}",
        module: "sales",
        scope: "sales:read",
    };
}

#[async_trait]
impl ReadTool for SalesSearchCustomers {
    async fn read(&self, call: &Call<'_>, input: SearchCustomersInput) -> Result<SearchCustomersOutput, ToolError> {
        let branch = call.caller.branch();
        let query = input.query.as_deref().map(str::trim).map(str::to_owned);
        let filters = Filters {
            query: query.as_ref().map(|q| q.to_lowercase()),
        };
        let pages = CursorScope::new(call.cursors, call.caller, Self::META.name, &filters)?;
        let after: Option<Position> = pages.open(input.cursor.as_deref())?;
        let want = super::page_size(input.limit, DEFAULT_LIMIT);

        let mut matching: Vec<Customer> = self
            .erp
            .customers(&Scope::of(call.caller))
            .await?
            .into_iter()
            .filter(|c| query.as_deref().is_none_or(|q| c.matches(q)))
            .filter(|c| after.as_ref().is_none_or(|p| c.code > p.after_customer))
            .collect();
        matching.sort_by(|a, b| a.code.cmp(&b.code));
        let Page {
            items: matching,
            next_after,
        } = Page::first(matching, want, |c| c.code.clone());
        let next_cursor = next_after
            .map(|after_customer| pages.seal(&Position { after_customer }))
            .transpose()?;
        Ok(SearchCustomersOutput {
            branch_id: branch.to_string(),
            customers: matching
                .into_iter()
                .map(|c| CustomerMatch {
                    credit_limit: Money::new(c.credit_limit, &c.currency),
                    code: c.code,
                    name: c.name,
                    city: c.city,
                    price_list: c.price_list,
                    payment_terms_days: c.payment_terms_days,
                    tax_exempt: c.tax_exempt,
                    credit_hold: c.credit_hold,
                })
                .collect(),
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemoryErp, TestCaller};

    fn search(query: Option<&str>, limit: Option<u32>) -> SearchCustomersInput {
        SearchCustomersInput {
            query: query.map(str::to_owned),
            limit,
            cursor: None,
        }
    }

    async fn run(erp: &MemoryErp, user: &str, input: SearchCustomersInput) -> Result<SearchCustomersOutput, ToolError> {
        let caller = TestCaller::demo(user).unwrap();
        SalesSearchCustomers::new(erp.port()).read(&caller.call(), input).await
    }

    fn codes(out: &SearchCustomersOutput) -> Vec<&str> {
        out.customers.iter().map(|c| c.code.as_str()).collect()
    }

    #[tokio::test]
    async fn every_customer_of_the_branch_is_listed_by_code_and_no_other() {
        let erp = MemoryErp::demo().unwrap();
        let out = run(&erp, "sales-bdg", search(None, None)).await.unwrap();
        assert_eq!(out.branch_id, "BDG-01");
        assert_eq!(codes(&out), ["C-BDG-001", "C-BDG-002", "C-BDG-003", "C-BDG-004"]);
        let tekstil = &out.customers[0];
        assert_eq!(tekstil.price_list, "PL-WHOLESALE");
        assert_eq!(
            (
                tekstil.credit_limit.amount.as_str(),
                tekstil.credit_limit.currency.as_str()
            ),
            ("150000000.00", "IDR")
        );
        assert_eq!(
            out.customers[2].credit_hold.as_deref(),
            Some("an invoice is more than 90 days overdue")
        );
        assert!(out.customers[3].tax_exempt);
        assert!(!tekstil.tax_exempt);
    }

    #[tokio::test]
    async fn a_query_matches_part_of_the_name_case_insensitively_or_the_whole_code() {
        let erp = MemoryErp::demo().unwrap();
        let by_name = run(&erp, "sales-bdg", search(Some("TEKSTIL"), None)).await.unwrap();
        assert_eq!(codes(&by_name), ["C-BDG-001"]);
        let by_code = run(&erp, "sales-bdg", search(Some(" c-bdg-002 "), None)).await.unwrap();
        assert_eq!(codes(&by_code), ["C-BDG-002"]);
        let part_of_a_code = run(&erp, "sales-bdg", search(Some("C-BDG"), None)).await.unwrap();
        assert!(part_of_a_code.customers.is_empty());
    }

    #[tokio::test]
    async fn another_branchs_customer_is_never_returned() {
        let erp = MemoryErp::demo().unwrap();
        let out = run(&erp, "sales-bdg", search(Some("C-SBY-001"), None)).await.unwrap();
        assert!(out.customers.is_empty());
        let sby = run(&erp, "buyer-sby", search(None, None)).await.unwrap();
        assert_eq!(codes(&sby), ["C-SBY-001", "C-SBY-002"]);
    }

    #[tokio::test]
    async fn pages_continue_after_the_last_customer_shown() {
        let erp = MemoryErp::demo().unwrap();
        let first = run(&erp, "sales-bdg", search(None, Some(3))).await.unwrap();
        assert_eq!(codes(&first), ["C-BDG-001", "C-BDG-002", "C-BDG-003"]);
        let next = SearchCustomersInput {
            cursor: first.next_cursor,
            ..search(None, Some(3))
        };
        let second = run(&erp, "sales-bdg", next).await.unwrap();
        assert_eq!(codes(&second), ["C-BDG-004"]);
        assert_eq!(second.next_cursor, None);
        // Exactly one page: no cursor.
        let exact = run(&erp, "sales-bdg", search(None, Some(4))).await.unwrap();
        assert_eq!(exact.next_cursor, None);
    }

    #[tokio::test]
    async fn a_cursor_of_another_query_is_refused() {
        let erp = MemoryErp::demo().unwrap();
        let first = run(&erp, "sales-bdg", search(None, Some(1))).await.unwrap();
        let other = SearchCustomersInput {
            cursor: first.next_cursor,
            ..search(Some("mitra"), Some(1))
        };
        let err = run(&erp, "sales-bdg", other).await.unwrap_err();
        assert_eq!(err.details().unwrap()[0].path, "cursor");
    }
}
