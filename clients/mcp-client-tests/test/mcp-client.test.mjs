// @ts-check
// draftline's MCP endpoint (POST /api/mcp, stateless Streamable HTTP) driven by the
// official MCP TypeScript SDK client, with a bearer token per demo user.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_SCOPES, DEMO_SCOPES, isoDate, startDraftline } from "../../ai-sdk/test/support/draftline-server.mjs";

const DRAFT = "purchasing_create_po_draft";
/** Bounded time for every MCP request. */
const REQ = { timeout: 15_000 };

/**
 * @typedef {import("../../ai-sdk/test/support/draftline-server.mjs").DraftlineServer} DraftlineServer
 * @typedef {import("../../ai-sdk/test/support/draftline-server.mjs").DemoUser} DemoUser
 */

/**
 * A connected, initialized MCP client for `token` (or no Authorization header at all).
 * @param {DraftlineServer} server
 * @param {string | undefined} token
 */
async function connect(server, token) {
  const client = new Client({ name: "draftline-mcp-client-tests", version: "0.0.0" });
  /** @type {Record<string, string>} */
  const headers = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers } });
  try {
    await client.connect(transport, REQ);
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return client;
}

/**
 * Every tool of `tools/list`, following the cursor (at most 50 pages).
 * @param {Client} client
 */
async function listAll(client) {
  /** @type {Awaited<ReturnType<Client["listTools"]>>["tools"]} */
  const tools = [];
  /** @type {string | undefined} */
  let cursor;
  for (let page = 0; page < 50; page++) {
    const res = await client.listTools(cursor === undefined ? {} : { cursor }, REQ);
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) return tools;
  }
  throw new Error("tools/list: more than 50 pages");
}

/**
 * The text of a tool result's text blocks.
 * @param {any} result
 * @returns {string}
 */
function textOf(result) {
  return (result.content ?? [])
    .filter((/** @type {any} */ c) => c.type === "text")
    .map((/** @type {any} */ c) => c.text)
    .join("\n");
}

/**
 * `tools/call`, with a bounded time.
 * @param {Client} client
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @returns {Promise<any>}
 */
function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, REQ);
}

describe("MCP endpoint with the MCP TypeScript SDK client", () => {
  /** @type {DraftlineServer} */
  let server;
  /** Every tool of the catalogue (name → module, tier), from a token holding every scope. */
  /** @type {Array<{ name: string, module: string, tier: string }>} */
  let catalogue;

  before(async () => {
    server = await startDraftline();
    const admin = await server.tokenFor({ sub: "mcp-test-admin", tenant: "demo", branch: "SBY-01", scope: ALL_SCOPES });
    const res = await fetch(`${server.url}/api/tools?format=ai-sdk`, {
      headers: { Authorization: `Bearer ${admin}` },
      signal: AbortSignal.timeout(10_000),
    });
    catalogue = /** @type {any} */ (await res.json()).tools;
    assert.ok(catalogue.length >= 3, JSON.stringify(catalogue));
  });
  after(async () => {
    await server?.stop();
  });

  test("initialize negotiates 2025-11-25 and announces tools", { timeout: 30_000 }, async () => {
    const client = await connect(server, await server.token("buyer-sby"));
    try {
      assert.ok(client.getServerCapabilities()?.tools, JSON.stringify(client.getServerCapabilities()));
      assert.ok(client.getServerVersion()?.name);
      const transport = /** @type {StreamableHTTPClientTransport} */ (client.transport);
      assert.equal(transport.protocolVersion, "2025-11-25");
      assert.equal(transport.sessionId, undefined, "a stateless endpoint issues no session id");
      await client.ping(REQ);
    } finally {
      await client.close();
    }
  });

  test("tools/list as each demo user is exactly the tools its scopes allow", { timeout: 60_000 }, async () => {
    for (const [user, scopes] of Object.entries(DEMO_SCOPES)) {
      const token = await server.token(/** @type {DemoUser} */ (user));
      const client = await connect(server, token);
      try {
        const tools = await listAll(client);
        const names = tools.map((t) => t.name);
        const expected = catalogue
          .filter((t) => /** @type {readonly string[]} */ (scopes).includes(`${t.module}:${t.tier}`))
          .map((t) => t.name)
          .sort();
        assert.deepEqual([...names].sort(), expected, `${user} (${scopes.join(" ")})`);
        assert.deepEqual(names, [...names].sort(), `${user}: tools/list is sorted by name`);

        // The same set as the HTTP listing for the same token.
        const res = await fetch(`${server.url}/api/tools?format=ai-sdk`, {
          headers: { Authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        });
        const http = /** @type {any} */ (await res.json()).tools.map((/** @type {any} */ t) => t.name).sort();
        assert.deepEqual([...names].sort(), http, `${user}: /api/mcp and /api/tools agree`);

        for (const t of tools) {
          const tier = catalogue.find((c) => c.name === t.name)?.tier;
          assert.ok(t.title, `${t.name} has a title`);
          assert.ok(t.description, `${t.name} has a description`);
          assert.equal(t.inputSchema.type, "object");
          assert.equal(/** @type {any} */ (t.inputSchema).additionalProperties, false, `${t.name} input is strict`);
          assert.ok(t.outputSchema, `${t.name} has an outputSchema`);
          assert.equal(t.annotations?.readOnlyHint, tier === "read", `${t.name} readOnlyHint`);
          assert.equal(t.annotations?.idempotentHint, true, `${t.name} idempotentHint`);
          assert.equal(t.annotations?.openWorldHint, false, `${t.name} openWorldHint`);
          if (tier === "draft") assert.equal(t.annotations?.destructiveHint, false, `${t.name} destructiveHint`);
        }
      } finally {
        await client.close();
      }
    }
    // The known demo tools, spelled out.
    assert.ok(
      ["inventory_get_stock", "purchasing_get_po", DRAFT].every((n) => catalogue.some((t) => t.name === n)),
    );
  });

  test("a read tool returns structuredContent and the same data as text", { timeout: 30_000 }, async () => {
    const client = await connect(server, await server.token("buyer-sby"));
    try {
      await listAll(client); // lets the SDK validate structuredContent against outputSchema
      const res = await call(client, "inventory_get_stock", { item_code: "BRG-0042" });
      assert.notEqual(res.isError, true, textOf(res));
      assert.equal(res.structuredContent?.item_code, "BRG-0042");
      assert.equal(res.structuredContent?.branch_id, "SBY-01");
      // The same data as text (the first text block is its JSON).
      assert.deepEqual(JSON.parse(res.content?.[0]?.text ?? "null"), res.structuredContent);
    } finally {
      await client.close();
    }
  });

  test("a draft tool creates one draft; a retry with the same client_ref is a replay", { timeout: 60_000 }, async () => {
    const token = await server.token("buyer-sby");
    const args = {
      vendor_code: "V-00231",
      needed_by: isoDate(14),
      client_ref: `mcp-${randomUUID()}`,
      note: "MCP client test",
      lines: [{ item_code: "BRG-0042", qty: 3, uom: "BOX" }],
    };

    const first = await connect(server, token);
    /** @type {any} */
    let created;
    try {
      await listAll(first);
      const res = await call(first, DRAFT, args);
      assert.notEqual(res.isError, true, textOf(res));
      created = res.structuredContent;
      assert.match(created?.po_number ?? "", /^PO-SBY-\d+$/, JSON.stringify(res));
      assert.equal(created.status, "draft");
      assert.equal(created.client_ref, args.client_ref);
      assert.equal(created.drafted_on_behalf_of, "buyer-sby");
      assert.equal(res._meta?.replayed, false);
      assert.match(textOf(res), new RegExp(created.po_number));
    } finally {
      await first.close();
    }

    // The agent lost the answer and retries on a new connection: same draft, marked replayed.
    const second = await connect(server, token);
    try {
      await listAll(second);
      const res = await call(second, DRAFT, args);
      assert.notEqual(res.isError, true, textOf(res));
      assert.equal(res.structuredContent?.po_number, created.po_number);
      assert.equal(res.structuredContent?.draft_id, created.draft_id);
      assert.equal(res._meta?.replayed, true, `the retry is not marked as a replay: ${JSON.stringify(res._meta)}`);
      assert.deepEqual(res.structuredContent, created, "a replay returns the stored result unchanged");

      // The same client_ref with different arguments is refused, not a second draft.
      const changed = await call(second, DRAFT, { ...args, lines: [{ item_code: "BRG-0042", qty: 4, uom: "BOX" }] });
      assert.equal(changed.isError, true, JSON.stringify(changed));
      assert.match(textOf(changed), /CONFLICT|client_ref|different/i);

      const po = await call(second, "purchasing_get_po", { po_number: created.po_number });
      assert.notEqual(po.isError, true, textOf(po));
      assert.equal(po.structuredContent?.draft_id, created.draft_id);
      assert.equal(po.structuredContent?.lines?.[0]?.qty, 3);
    } finally {
      await second.close();
    }

    // Another branch's buyer cannot see it: reported exactly like a missing PO.
    const jkt = await connect(server, await server.token("buyer-jkt"));
    try {
      const res = await call(jkt, "purchasing_get_po", { po_number: created.po_number });
      assert.equal(res.isError, true, JSON.stringify(res));
      assert.match(textOf(res), /not found/i);
    } finally {
      await jkt.close();
    }
  });

  test("a tool the user lacks is not listed, and calling it anyway is a tool error naming the scope", { timeout: 30_000 }, async () => {
    const client = await connect(server, await server.token("clerk-sby"));
    try {
      const names = (await listAll(client)).map((t) => t.name);
      assert.ok(names.includes("inventory_get_stock"));
      assert.ok(!names.includes(DRAFT), `clerk-sby sees ${DRAFT}`);
      const res = await call(client, DRAFT, {
        vendor_code: "V-00231",
        needed_by: isoDate(7),
        client_ref: `clerk-${randomUUID()}`,
        note: null,
        lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
      });
      assert.equal(res.isError, true, JSON.stringify(res));
      assert.match(textOf(res), /purchasing:draft/);
    } finally {
      await client.close();
    }
  });

  test("without a token the SDK's connect fails with 401, and the challenge names the metadata", { timeout: 30_000 }, async () => {
    await assert.rejects(connect(server, undefined), /401|unauthori[sz]ed/i);
    const res = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1:\d+\//);
  });
});
