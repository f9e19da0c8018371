//! What the endpoint says about itself: its identity, its capabilities (tools
//! only, no list-changed notifications: the catalogue changes only with a
//! deployment), the instructions a client may put in front of the model, and
//! the two results built from them: `initialize` (handshake revisions) and
//! `server/discover` (2026-07-28).

use rmcp::model::{CacheScope, DiscoverResult, Implementation, InitializeResult, ServerCapabilities, ToolsCapability};
use serde_json::{Map, Value};

use super::jsonrpc::encode;
use super::versions;

/// The `_meta` key under which modern results name the server.
pub const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// How long a client may cache `server/discover` and `tools/list`, in
/// milliseconds. The catalogue changes only with a deployment.
pub const CACHE_TTL_MS: u64 = 300_000;

/// Guidance for the model: the two tiers and how to retry a draft safely.
pub const INSTRUCTIONS: &str = "draftline exposes the ERP of your organisation as tools, on behalf of the signed-in \
person and limited to their branch and scopes. There are two kinds of tools. Read tools (readOnlyHint: true) only \
look things up and may be called as often as needed. Draft tools create a document in status 'draft' (for example \
a purchase-order draft); nothing is approved, posted, sent to a vendor or cancelled, a person does that in the ERP. \
Every draft tool takes a client_ref: choose one per intended document (for example 'reorder-BRG-0042-2026-12-01') \
and send exactly the same arguments with the same client_ref when you retry after a timeout or an error. The retry \
then returns the draft that was already created (_meta.replayed is true) instead of creating a second one; a new \
document needs a new client_ref. A failed call comes back as a result with isError: true whose text says what \
failed, what did not happen and what to do next; follow it rather than guessing. Tools you cannot see are outside \
your scopes; ask a person instead.";

/// The server's identity.
pub fn implementation() -> Implementation {
    Implementation::new("draftline", env!("CARGO_PKG_VERSION"))
        .with_title("draftline ERP tools")
        .with_description("Read and draft tools over the ERP: stateless, audited, idempotent drafts.")
}

/// Tools, without list-changed notifications.
pub fn capabilities() -> ServerCapabilities {
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(false);
    let mut capabilities = ServerCapabilities::default();
    capabilities.tools = Some(tools);
    capabilities
}

/// The `initialize` result for a client asking for `requested`.
pub fn initialize_result(requested: &str) -> Value {
    encode(
        &InitializeResult::new(capabilities())
            .with_protocol_version(versions::negotiate(requested))
            .with_server_info(implementation())
            .with_instructions(INSTRUCTIONS),
    )
}

/// The `server/discover` result. It names the server in `_meta` (as every
/// modern result does) and, for clients of earlier drafts of the revision,
/// also as `serverInfo`. It holds nothing user-specific, so it is public.
pub fn discover_result() -> Value {
    let mut result = DiscoverResult::new(versions::supported(), capabilities())
        .with_server_info(implementation())
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public);
    result.instructions = Some(INSTRUCTIONS.to_owned());
    let mut value = encode(&result);
    if let Some(object) = value.as_object_mut() {
        object.insert("serverInfo".to_owned(), encode(&implementation()));
    }
    value
}

/// Adjusts a result to the era it is sent in: modern results carry
/// `resultType` and name the server in `_meta`; legacy results carry none of
/// the fields their revisions do not define (`resultType`, `ttlMs`, `cacheScope`).
pub fn finish(modern: bool, mut result: Value) -> Value {
    let Some(object) = result.as_object_mut() else {
        return result;
    };
    if modern {
        object
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".to_owned()));
        let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(SERVER_INFO_META.to_owned(), encode(&implementation()));
        }
    } else {
        for field in ["resultType", "ttlMs", "cacheScope"] {
            object.remove(field);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_answers_with_a_handshake_revision_and_tools_only() {
        let result = initialize_result("2025-11-25");
        assert_eq!(result["protocolVersion"], "2025-11-25");
        assert_eq!(result["capabilities"], json!({"tools": {"listChanged": false}}));
        assert_eq!(result["serverInfo"]["name"], "draftline");
        assert!(result["instructions"].as_str().unwrap().contains("client_ref"));
        assert_eq!(initialize_result("2026-07-28")["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn discover_lists_every_version_and_names_the_server_in_meta() {
        let result = finish(true, discover_result());
        assert_eq!(
            result["supportedVersions"],
            json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
        );
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["cacheScope"], "public");
        assert_eq!(result["ttlMs"], CACHE_TTL_MS);
        assert_eq!(result["_meta"][SERVER_INFO_META]["name"], "draftline");
        assert_eq!(result["serverInfo"]["name"], "draftline");
    }

    #[test]
    fn legacy_results_lose_the_modern_fields() {
        let result = finish(
            false,
            json!({"resultType": "complete", "ttlMs": 1, "cacheScope": "private", "tools": []}),
        );
        assert_eq!(result, json!({"tools": []}));
    }
}
