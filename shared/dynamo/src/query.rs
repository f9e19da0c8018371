//! A store-neutral [`Query`] as one DynamoDB `Query` request.

use futures::FutureExt;

use aws_sdk_dynamodb::types::{AttributeValue, Select};
use draftline_contract::ToolError;
use draftline_contract::store::{Page, Query};

use crate::writes::{Placeholders, into_attributes, item};
use crate::{Db, store_error};

/// One page of `query`; `failed` is what a failure tells the caller did not
/// happen.
pub async fn query(db: &Db, query: &Query, failed: &str) -> Result<Page, ToolError> {
    let mut p = Placeholders::default();
    let pk_name = query.index.map_or("pk", |index| index.pk);
    let sk_name = query.index.map_or("sk", |index| index.sk);
    let mut key = format!("{} = {}", p.name(pk_name), p.value(AttributeValue::S(query.pk.clone())));
    if let Some(prefix) = &query.sk_prefix {
        let sk = p.name(sk_name);
        key.push_str(&format!(
            " AND begins_with({sk}, {})",
            p.value(AttributeValue::S(prefix.clone()))
        ));
    }
    let filter = query.filter.as_ref().map(|c| p.condition(c));
    let projection = query.keys_only.then(|| {
        let mut names = vec![p.name("pk"), p.name("sk")];
        if query.index.is_some() {
            names.push(p.name(pk_name));
            names.push(p.name(sk_name));
        }
        names.join(", ")
    });
    let (names, values) = p.names();
    let out = db
        .client()
        .query()
        .table_name(db.table())
        .set_index_name(query.index.map(|index| index.name.to_owned()))
        .key_condition_expression(key)
        .set_filter_expression(filter)
        .set_projection_expression(projection.clone())
        .set_select(projection.map(|_| Select::SpecificAttributes))
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .scan_index_forward(!query.newest_first)
        .set_limit(query.limit)
        .set_exclusive_start_key(query.after.as_ref().map(item))
        .consistent_read(query.consistent)
        .send()
        .boxed()
        .await
        .map_err(|e| store_error(e, failed))?;
    let last = out
        .last_evaluated_key
        .filter(|key| !key.is_empty())
        .and_then(into_attributes);
    Ok(Page {
        items: out
            .items
            .unwrap_or_default()
            .into_iter()
            .filter_map(into_attributes)
            .collect(),
        last,
    })
}
