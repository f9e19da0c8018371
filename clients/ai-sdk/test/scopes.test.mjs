// @ts-check
// A user without a scope never gets the tool, in the AI SDK tool set nor in any listing
// format, and calling it anyway is refused with text the model can repeat.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions } from "./support/approval.mjs";
import { ALL_SCOPES, DEMO_SCOPES, isoDate, startDraftline } from "./support/draftline-server.mjs";

const DRAFT = "purchasing_create_po_draft";

describe("scopes", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  before(async () => {
    server = await startDraftline();
  });
  after(async () => {
    await server?.stop();
  });

  test("each demo user's AI SDK tools are exactly the tools its scopes allow", { timeout: 60_000 }, async () => {
    const admin = await server.tokenFor({ sub: "scope-test-admin", tenant: "demo", branch: "SBY-01", scope: ALL_SCOPES });
    const { tools: everyone } = await draftlineTools({ baseUrl: server.url, token: admin, runId: `run-${randomUUID()}` });
    // The scope a tool needs is `<module>:<tier>`; read both from the full listing.
    const res = await fetch(`${server.url}/api/tools?format=ai-sdk`, {
      headers: { Authorization: `Bearer ${admin}` },
      signal: AbortSignal.timeout(10_000),
    });
    const full = /** @type {{ tools: Array<{ name: string, module: string, tier: string }> }} */ (await res.json());
    assert.deepEqual(full.tools.map((t) => t.name).sort(), Object.keys(everyone).sort());
    assert.ok(full.tools.some((t) => t.name === DRAFT));

    for (const [user, scopes] of Object.entries(DEMO_SCOPES)) {
      const { tools } = await draftlineTools({
        baseUrl: server.url,
        token: await server.token(/** @type {any} */ (user)),
        runId: `run-${randomUUID()}`,
      });
      const expected = full.tools
        .filter((t) => /** @type {readonly string[]} */ (scopes).includes(`${t.module}:${t.tier}`))
        .map((t) => t.name)
        .sort();
      assert.deepEqual(Object.keys(tools).sort(), expected, `${user} (${scopes.join(" ")})`);
    }
  });

  test("clerk-sby (inventory:read) never gets purchasing_create_po_draft, in any format", { timeout: 60_000 }, async () => {
    const clerk = await server.token("clerk-sby");
    const { tools } = await draftlineTools({ baseUrl: server.url, token: clerk, runId: `run-${randomUUID()}` });
    assert.ok("inventory_get_stock" in tools);
    assert.ok(!(DRAFT in tools));
    assert.deepEqual(Object.keys(tools).filter((n) => n.startsWith("purchasing_")), []);

    for (const format of ["ai-sdk", "mcp", "openai", "openapi"]) {
      const res = await fetch(`${server.url}/api/tools?format=${format}`, {
        headers: { Authorization: `Bearer ${clerk}` },
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      assert.equal(res.status, 200, `format=${format}: ${text.slice(0, 300)}`);
      assert.ok(!text.includes(DRAFT), `format=${format} shows ${DRAFT} to clerk-sby`);
      assert.ok(text.includes("inventory_get_stock"), `format=${format} lacks inventory_get_stock`);
    }
  });

  test("calling the draft tool with clerk's token anyway returns a refusal the model can repeat", { timeout: 60_000 }, async () => {
    const buyer = await server.token("buyer-sby");
    const clerk = await server.token("clerk-sby");
    const input = {
      vendor_code: "V-00231",
      needed_by: isoDate(7),
      client_ref: `scope-test-${randomUUID()}`,
      note: null,
      lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
    };

    // The tool's URL, called directly: 403 with the scope in the challenge and the text.
    const direct = await fetch(`${server.url}/api/${DRAFT}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${clerk}`, "Content-Type": "application/json", "X-Agent-Run-Id": "run-direct" },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(10_000),
    });
    const envelope = /** @type {any} */ (await direct.json());
    assert.equal(direct.status, 403);
    assert.match(direct.headers.get("www-authenticate") ?? "", /insufficient_scope/);
    assert.match(direct.headers.get("www-authenticate") ?? "", /purchasing:draft/);
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error.code, "FORBIDDEN");
    assert.equal(envelope.error.retryable, false);

    // Through the package: the token loses the scope between listing and call (a downgraded
    // session); the server re-checks and the tool returns text instead of throwing.
    let token = buyer;
    const { tools } = await draftlineTools({ baseUrl: server.url, token: async () => token, runId: "run-downgraded" });
    const draft = tools[DRAFT];
    assert.ok(draft?.execute);
    token = clerk;
    const approvedBy = (/** @type {string} */ toolCallId) =>
      approvedCallOptions({ toolName: DRAFT, toolCallId, input, reason: "buyer confirmed" });
    const out = await draft.execute(input, approvedBy("call_forbidden"));
    assert.equal(typeof out, "string");
    assert.match(String(out), /^Error FORBIDDEN \(not retryable\): /);
    assert.match(String(out), /purchasing:draft/);
    assert.match(String(out), /Nothing was read or written|No draft was created/);

    // The refused call stored nothing under its key: the same call with buyer's token now
    // creates the draft (201, not a replay of anything).
    token = buyer;
    const created = /** @type {any} */ (await draft.execute(input, approvedBy("call_allowed")));
    assert.equal(created?.status, "draft", JSON.stringify(created));
    assert.equal(created.replayed, undefined);
    assert.equal(created.drafted_by_agent_run, "run-downgraded");
  });
});
