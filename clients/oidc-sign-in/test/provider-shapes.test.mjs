// @ts-check
// Tokens from the identity provider a company already has (docs/identity.md): real
// OpenID providers (support/shaped-provider.mjs) issue access tokens shaped like Okta's,
// Entra ID's, Auth0's and Keycloak's, and `draftline serve` trusts each issuer with the
// mapping that reads its shape (DRAFTLINE_ISSUERS), and a fifth issuer is another
// company's (tenant globex). Each shaped token reads stock and drafts a purchase order as
// buyer-sby of the demo tenant's Surabaya branch, and the audit item says so; a token of
// the demo tenant's issuer that names globex, and one of globex's issuer that lacks the
// branch claim its mapping reads, are refused 401 naming it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { auditRows } from "../../ai-sdk/test/support/audit.mjs";
import { startDraftline } from "../../ai-sdk/test/support/draftline-server.mjs";
import { MAPPINGS, NAMESPACE, SHAPES, startShapedProvider } from "./support/shaped-provider.mjs";

/** @type {Record<string, import("./support/shaped-provider.mjs").ShapedProvider>} */
const providers = {};
/** @type {import("../../ai-sdk/test/support/draftline-server.mjs").DraftlineServer} */
let draftline;

before(async () => {
  for (const [shape, claims] of Object.entries(SHAPES)) {
    /** @type {Record<string, Record<string, unknown>>} */
    const clients = { [`agent-${shape}`]: claims };
    if (shape === "auth0") {
      // The same issuer claiming another tenant.
      clients["agent-auth0-globex"] = { ...claims, [`${NAMESPACE}tenant`]: "globex" };
    }
    providers[shape] = await startShapedProvider(clients);
  }
  // A second company's issuer, for tenant globex (Okta-shaped): one of its
  // tokens lacks the branch claim its mapping reads.
  const { branch_id: _dropped, ...noBranch } = { ...SHAPES.okta, uid: "buyer-globex" };
  providers.globex = await startShapedProvider({ "agent-globex-no-branch": noBranch });
  const mappings = {
    ...MAPPINGS,
    globex: { claims: { tenant: { fixed: "globex" }, user: "uid", scopes: "scp" } },
  };
  const issuers = Object.entries(providers).map(([name, provider]) => ({
    issuer: provider.issuer,
    jwks_url: `${provider.issuer}/jwks`,
    ...mappings[/** @type {keyof typeof mappings} */ (name)],
  }));
  draftline = await startDraftline({
    erp: "builtin",
    env: {
      DRAFTLINE_ISSUERS: JSON.stringify({ issuers }),
      // Each shape drafts the same order: no near-duplicate question between them.
      DRAFTLINE_NEAR_DUPLICATE_HOURS: "0",
    },
  });
  for (const provider of Object.values(providers)) provider.configure(draftline.url);
});

after(async () => {
  await draftline?.stop();
  for (const provider of Object.values(providers)) await provider.stop();
});

/** Failure details: the providers' and draftline's logs. */
function logs() {
  const issued = Object.entries(providers).map(([shape, p]) => `--- ${shape} ---\n${p.log().join("\n")}`);
  return `\n${issued.join("\n")}\n--- draftline ---\n${draftline.output().slice(-6000)}`;
}

/**
 * Calls tool `tool` with `token`.
 * @param {string} tool
 * @param {string} token
 * @param {object} args
 * @param {Record<string, string>} [headers]
 */
async function call(tool, token, args, headers = {}) {
  const response = await fetch(`${draftline.url}/api/${tool}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(args),
  });
  return { status: response.status, body: /** @type {any} */ (await response.json()) };
}

describe("tokens from the identity provider a company already has", () => {
  for (const shape of Object.keys(SHAPES)) {
    test(`a ${shape}-shaped token reads stock and drafts a PO through its mapping`, async () => {
      const token = await providers[shape].token(`agent-${shape}`);
      const stock = await call("inventory_get_stock", token, { item_code: "BRG-0042" });
      assert.equal(stock.status, 200, JSON.stringify(stock.body) + logs());
      assert.equal(stock.body.data.branch_id, "SBY-01");
      const run = `run-shape-${shape}`;
      const drafted = await call(
        "purchasing_create_po_draft",
        token,
        {
          vendor_code: "V-00231",
          needed_by: "2026-12-15",
          client_ref: `shape-${shape}`,
          note: null,
          lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
        },
        { "idempotency-key": `shape-${shape}`, "x-agent-run-id": run },
      );
      assert.equal(drafted.status, 201, JSON.stringify(drafted.body) + logs());
      assert.equal(drafted.body.data.branch_id, "SBY-01");
      assert.equal(drafted.body.data.drafted_on_behalf_of, "buyer-sby");
      // The audit item names the mapped tenant, branch and person.
      const rows = await auditRows(draftline, run);
      const draft = rows.find((row) => row.tool === "purchasing_create_po_draft");
      assert.ok(draft, `an audit item of the draft: ${JSON.stringify(rows)}`);
      assert.deepEqual([draft.tenant, draft.branch, draft.onBehalfOf], ["demo", "SBY-01", "buyer-sby"]);
      assert.equal(draft.outcome, "ok");
      assert.equal(draft.document, drafted.body.data.po_number);
    });
  }

  test("a token of the demo tenant's issuer that names the other tenant, globex, is refused 401 naming it", async () => {
    const token = await providers.auth0.token("agent-auth0-globex");
    const reply = await call("inventory_get_stock", token, { item_code: "BRG-0042" });
    assert.equal(reply.status, 401, JSON.stringify(reply.body) + logs());
    assert.equal(reply.body.error.code, "UNAUTHENTICATED");
    assert.match(reply.body.error.message, /tenant 'globex'/);
  });

  test("a token of globex's issuer without the branch claim its mapping reads is refused 401 naming it", async () => {
    const token = await providers.globex.token("agent-globex-no-branch");
    const reply = await call("inventory_get_stock", token, { item_code: "BRG-0042" });
    assert.equal(reply.status, 401, JSON.stringify(reply.body) + logs());
    assert.equal(reply.body.error.code, "UNAUTHENTICATED");
    assert.match(reply.body.error.message, /claim 'branch_id' is missing/);
  });

  test("the resource metadata lists every issuer as an authorization server", async () => {
    const response = await fetch(`${draftline.url}/.well-known/oauth-protected-resource`);
    const metadata = /** @type {any} */ (await response.json());
    const listed = [...metadata.authorization_servers].sort();
    const issuers = Object.values(providers)
      .map((p) => p.issuer)
      .sort();
    assert.deepEqual(listed, issuers);
  });
});
