//! How the domain's sales order types are stored: keys and item mappings.

use draftline_contract::ErpError;
use draftline_contract::identity::{BranchId, TenantId};
use draftline_erp::domain::*;

use super::BranchRecord;
use super::attrs::{self, Item as Attrs, nv, sv};
use crate::keys;

impl BranchRecord for SalesOrder {
    fn to_item(&self, tenant: &TenantId, branch: &BranchId) -> Attrs {
        Attrs::from([
            ("pk".to_owned(), sv(keys::sales_orders(tenant, branch))),
            ("sk".to_owned(), sv(keys::sales_order_sk(&self.customer, &self.number))),
            ("kind".to_owned(), sv("sales_order")),
            ("number".to_owned(), sv(&self.number)),
            ("customer".to_owned(), sv(&self.customer)),
            ("order_date".to_owned(), sv(self.order_date.to_string())),
            ("status".to_owned(), sv(self.status.code())),
            ("total".to_owned(), nv(self.total)),
            ("open_amount".to_owned(), nv(self.open_amount)),
            ("currency".to_owned(), sv(&self.currency)),
        ])
    }

    fn from_item(item: &Attrs) -> Result<Self, ErpError> {
        let what = "sales order";
        Ok(Self {
            number: attrs::s(item, what, "number")?,
            customer: attrs::s(item, what, "customer")?,
            order_date: attrs::date(item, what, "order_date")?,
            status: SalesOrderStatus::from_code(&attrs::s(item, what, "status")?)
                .ok_or_else(|| attrs::corrupt(what, "status"))?,
            total: attrs::dec(item, what, "total")?,
            open_amount: attrs::dec(item, what, "open_amount")?,
            currency: attrs::s(item, what, "currency")?,
        })
    }
}
