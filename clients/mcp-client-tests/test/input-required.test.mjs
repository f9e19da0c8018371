// @ts-check
// "Ask rather than guess" over MCP, driven by the official MCP TypeScript SDK clients:
// a PO draft that closely matches an open agent draft of the same branch (same vendor,
// same item codes, last 24 h, another idempotency key) creates nothing and asks a person.
//
// - MCP 2026-07-28 with the v2 client (`@modelcontextprotocol/client`, pinned era, form
//   elicitation capability): the server answers `tools/call` with an `input_required`
//   result; the SDK calls the registered `elicitation/create` handler and retries the
//   call by itself with `inputResponses` and the `requestState` echoed.
// - MCP 2025-11-25 with the v1 client (`@modelcontextprotocol/sdk`): an `isError` result
//   with `_meta.error.code = "INPUT_REQUIRED"` and a request state; the person's answer
//   goes back as `_meta["io.draftline/confirm"]` of the retried `tools/call`.
//
// Every test starts its own `draftline serve` (fresh embedded DynamoDB and demo data), so
// the drafts of one cannot be the near duplicates of another, and the documents created
// are counted exactly with `purchasing_search_pos`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isoDate, startDraftline } from "../../ai-sdk/test/support/draftline-server.mjs";

const DRAFT = "purchasing_create_po_draft";
const SEARCH = "purchasing_search_pos";
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
/** The `inputRequests` key draftline uses for its question. */
const QUESTION_KEY = "draftline_near_duplicate";
/** The `_meta` key of a 2025-11-25 confirmation. */
const CONFIRM_META = "io.draftline/confirm";
/** Bounded time for every MCP request (each leg of a multi-round-trip call). */
const REQ = { timeout: 15_000 };
const VENDOR = "V-00231";

/**
 * @typedef {import("../../ai-sdk/test/support/draftline-server.mjs").DraftlineServer} DraftlineServer
 * @typedef {import("@modelcontextprotocol/client").ElicitRequest} ElicitRequest
 * @typedef {import("@modelcontextprotocol/client").ElicitResult} ElicitResult
 */

/**
 * The arguments of a PO draft: always the same vendor and items, a `client_ref` of its own
 * (a new idempotency key, as a restarted agent run would send).
 * @param {string} clientRef
 */
function poArgs(clientRef) {
  return {
    vendor_code: VENDOR,
    needed_by: isoDate(14),
    client_ref: clientRef,
    note: "input-required test",
    lines: [
      { item_code: "BRG-0042", qty: 10, uom: "BOX" },
      { item_code: "BRG-0043", qty: 30, uom: "PCS" },
    ],
  };
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
 * The PO numbers of every draft of VENDOR in the caller's branch, via `purchasing_search_pos`
 * (all pages). Works with either client: both have `callTool(params, schema|options, options)`.
 * @param {(args: Record<string, unknown>) => Promise<any>} search
 * @returns {Promise<string[]>}
 */
async function draftNumbers(search) {
  /** @type {string[]} */
  const numbers = [];
  /** @type {string | null} */
  let cursor = null;
  for (let page = 0; page < 20; page++) {
    const res = await search({
      status: "draft",
      vendor_code: VENDOR,
      created_from: null,
      created_to: null,
      limit: 50,
      cursor,
    });
    assert.notEqual(res.isError, true, textOf(res));
    for (const po of res.structuredContent.purchase_orders) numbers.push(po.po_number);
    cursor = res.structuredContent.next_cursor;
    if (!cursor) return numbers.sort();
  }
  throw new Error(`${SEARCH}: more than 20 pages`);
}

/**
 * A fetch that records every JSON-RPC message the SDK POSTs, then sends it unchanged.
 * @param {any[]} sent
 * @returns {(url: string | URL, init?: RequestInit) => Promise<Response>}
 */
function recordingFetch(sent) {
  return async (url, init) => {
    if (typeof init?.body === "string") {
      try {
        sent.push(JSON.parse(init.body));
      } catch {
        // not JSON: nothing to record
      }
    }
    return fetch(url, init);
  };
}

describe("MCP 2026-07-28: the v2 client answers draftline's elicitation and retries by itself", () => {
  test("create_another creates a second draft, use_existing returns the existing one, decline creates nothing", { timeout: 120_000 }, async () => {
    const server = await startDraftline();
    try {
      const token = await server.token("buyer-sby");
      /** @type {any[]} */
      const sent = [];
      const client = new ClientV2(
        { name: "draftline-input-required-tests", version: "0.0.0" },
        {
          versionNegotiation: { mode: { pin: MODERN } },
          capabilities: { elicitation: { form: {} } },
        },
      );

      // The person behind the client: answers with whatever the next call needs, and
      // keeps every question it was asked.
      /** @type {ElicitResult} */
      let nextAnswer = { action: "cancel" };
      /** @type {ElicitRequest[]} */
      const asked = [];
      client.setRequestHandler("elicitation/create", async (request) => {
        asked.push(request);
        return nextAnswer;
      });

      const transport = new HttpTransportV2(new URL(`${server.url}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        fetch: recordingFetch(sent),
      });
      await client.connect(transport, REQ);
      try {
        assert.equal(client.getProtocolEra(), "modern");
        assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
        assert.ok(client.getServerCapabilities()?.tools, JSON.stringify(client.getServerCapabilities()));
        await client.listTools(undefined, REQ); // output-schema validation of structuredContent

        const call = (/** @type {Record<string, unknown>} */ args) => client.callTool({ name: DRAFT, arguments: args }, REQ);
        const search = (/** @type {Record<string, unknown>} */ args) => client.callTool({ name: SEARCH, arguments: args }, REQ);
        const before = await draftNumbers(search);

        // 1. The first draft: created, no question.
        const first = /** @type {any} */ (await call(poArgs(`v2-first-${randomUUID()}`)));
        assert.equal(first.isError, false, textOf(first));
        const firstPo = first.structuredContent?.po_number;
        assert.match(firstPo ?? "", /^PO-SBY-\d+$/, JSON.stringify(first));
        assert.equal(first._meta?.replayed, false);
        assert.equal(asked.length, 0, "the first draft asks nothing");
        assert.deepEqual(await draftNumbers(search), [...before, firstPo].sort());

        // 2. The same reorder under a new client_ref: the server asks, the handler accepts
        //    "create_another", the SDK retries with the answer, and a second draft exists.
        nextAnswer = { action: "accept", content: { decision: "create_another" } };
        const sentBefore = sent.length;
        const secondArgs = poArgs(`v2-second-${randomUUID()}`);
        const second = /** @type {any} */ (await call(secondArgs));
        assert.equal(asked.length, 1, "the SDK handed the question to the elicitation handler once");
        const question = asked[0];
        assert.equal(question?.method, "elicitation/create");
        const params = /** @type {any} */ (question?.params);
        assert.equal(params.mode, "form");
        assert.ok(params.message.startsWith(`${firstPo}, `), params.message);
        assert.ok(params.message.endsWith("Create another draft anyway?"), params.message);
        assert.equal(params.requestedSchema.type, "object");
        assert.deepEqual(params.requestedSchema.required, ["decision"]);
        const decision = params.requestedSchema.properties.decision;
        assert.equal(decision.type, "string");
        assert.deepEqual(
          decision.oneOf.map((/** @type {any} */ o) => o.const),
          ["create_another", "use_existing"],
        );
        assert.equal(second.isError, false, textOf(second));
        const secondPo = second.structuredContent?.po_number;
        assert.match(secondPo ?? "", /^PO-SBY-\d+$/, JSON.stringify(second));
        assert.notEqual(secondPo, firstPo, "create_another is a new document");
        assert.equal(second.structuredContent?.client_ref, secondArgs.client_ref);
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort());

        // On the wire: the original call, then the SDK's retry with the same arguments,
        // the answer under the question's key and a requestState (on a fresh request id).
        const legs = sent.slice(sentBefore).filter((m) => m.method === "tools/call" && m.params?.name === DRAFT);
        assert.equal(legs.length, 2, JSON.stringify(legs));
        const [original, retry] = legs;
        assert.equal(original.params.requestState, undefined);
        assert.equal(original.params.inputResponses, undefined);
        assert.ok(
          original.params._meta?.["io.modelcontextprotocol/clientCapabilities"]?.elicitation,
          `the call declares elicitation: ${JSON.stringify(original.params._meta)}`,
        );
        assert.notEqual(retry.id, original.id);
        assert.deepEqual(retry.params.arguments, original.params.arguments);
        assert.equal(typeof retry.params.requestState, "string");
        assert.ok(retry.params.requestState.length > 0);
        assert.deepEqual(retry.params.inputResponses, {
          [QUESTION_KEY]: { action: "accept", content: { decision: "create_another" } },
        });

        // 3. Once more under another new client_ref, answered "use_existing": no new
        //    document, the answer is the draft the question named.
        nextAnswer = { action: "accept", content: { decision: "use_existing" } };
        const third = /** @type {any} */ (await call(poArgs(`v2-third-${randomUUID()}`)));
        assert.equal(asked.length, 2);
        const named = /^(PO-SBY-\d+)\b/.exec(/** @type {any} */ (asked[1]?.params).message)?.[1];
        assert.ok(named === firstPo || named === secondPo, `the question names ${named}`);
        assert.equal(third.isError, false, textOf(third));
        assert.equal(third.structuredContent?.po_number, named, JSON.stringify(third.structuredContent));
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort(), "use_existing creates nothing");

        // 4. And again, declined: an isError result, nothing created.
        nextAnswer = { action: "decline" };
        const fourth = /** @type {any} */ (await call(poArgs(`v2-fourth-${randomUUID()}`)));
        assert.equal(asked.length, 3);
        assert.equal(fourth.isError, true, JSON.stringify(fourth));
        assert.ok(textOf(fourth).includes("declined"), "the declined call says what happened");
        assert.equal(fourth._meta?.error?.code, "DECLINED", JSON.stringify(fourth));
        assert.equal(fourth._meta?.error?.retryable, false, JSON.stringify(fourth));
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort(), "decline creates nothing");
      } finally {
        await client.close();
      }
    } catch (err) {
      throw new Error(`${/** @type {Error} */ (err).message}\n--- server output ---\n${server.output().slice(-4000)}`, { cause: err });
    } finally {
      await server.stop();
    }
  });
});

describe("MCP 2025-11-25: the v1 client gets an isError result and confirms through _meta", () => {
  /**
   * A connected v1 client (the SDK's default negotiation: 2025-11-25).
   * @param {DraftlineServer} server
   * @param {string} token
   */
  async function connectV1(server, token) {
    const client = new ClientV1({ name: "draftline-input-required-tests", version: "0.0.0" });
    const transport = new HttpTransportV1(new URL(`${server.url}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport, REQ);
    assert.equal(transport.protocolVersion, LEGACY);
    await client.listTools(undefined, REQ);
    return client;
  }

  /**
   * The second, near-duplicate call's answer, and the draft numbers after the first one.
   * @param {ClientV1} client
   */
  async function askedOnce(client) {
    const call = (/** @type {Record<string, unknown>} */ args) => /** @type {Promise<any>} */ (client.callTool({ name: DRAFT, arguments: args }, undefined, REQ));
    const search = (/** @type {Record<string, unknown>} */ args) => client.callTool({ name: SEARCH, arguments: args }, undefined, REQ);
    const before = await draftNumbers(search);
    const first = await call(poArgs(`v1-first-${randomUUID()}`));
    assert.equal(first.isError, false, textOf(first));
    const firstPo = first.structuredContent?.po_number;
    assert.match(firstPo ?? "", /^PO-SBY-\d+$/);
    const secondArgs = poArgs(`v1-second-${randomUUID()}`);
    const asked = await call(secondArgs);
    return { call, search, before, firstPo, secondArgs, asked };
  }

  test("the near duplicate is an INPUT_REQUIRED error; the confirmed retry creates the draft", { timeout: 120_000 }, async () => {
    const server = await startDraftline();
    try {
      const client = await connectV1(server, await server.token("buyer-sby"));
      try {
        const { call, search, before, firstPo, secondArgs, asked } = await askedOnce(client);

        assert.equal(asked.isError, true, JSON.stringify(asked));
        assert.equal(asked.resultType, undefined, "no 2026-07-28 vocabulary on a 2025-11-25 connection");
        const error = asked._meta?.error;
        assert.equal(error?.code, "INPUT_REQUIRED", JSON.stringify(asked._meta));
        assert.equal(error.retryable, false);
        const state = error.inputRequired?.requestState;
        assert.equal(typeof state, "string");
        assert.ok(state.length > 0);
        assert.equal(error.inputRequired.existing?.number, firstPo);
        assert.deepEqual(error.inputRequired.choices, ["create_another", "use_existing"]);
        assert.equal(error.inputRequired.confirm?.mcp_meta, CONFIRM_META);
        assert.equal(error.inputRequired.confirm?.create_another, `create-another ${state}`);
        const text = textOf(asked);
        assert.ok(text.startsWith(`${firstPo}, `), text);
        assert.match(text, /Create another draft anyway\?/);
        assert.match(text, /Nothing was created/);
        assert.deepEqual(await draftNumbers(search), [...before, firstPo].sort(), "the question created nothing");

        // The person said "create another": the same call, same arguments, with the
        // confirmation in the tools/call params' _meta (here through client.request, the
        // SDK's raw request path, to show the params reach the server as written).
        const { CallToolResultSchema } = await import("@modelcontextprotocol/sdk/types.js");
        const confirmed = /** @type {any} */ (
          await client.request(
            {
              method: "tools/call",
              params: { name: DRAFT, arguments: secondArgs, _meta: { [CONFIRM_META]: `create-another ${state}` } },
            },
            CallToolResultSchema,
            REQ,
          )
        );
        assert.equal(confirmed.isError, false, textOf(confirmed));
        const secondPo = confirmed.structuredContent?.po_number;
        assert.match(secondPo ?? "", /^PO-SBY-\d+$/, JSON.stringify(confirmed));
        assert.notEqual(secondPo, firstPo);
        assert.equal(confirmed.structuredContent?.client_ref, secondArgs.client_ref);
        assert.equal(confirmed._meta?.replayed, false);
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort(), "exactly one more draft");

        // Its retry (same client_ref, same confirmation, via callTool) is a replay: still one more.
        const again = await client.callTool(
          { name: DRAFT, arguments: secondArgs, _meta: { [CONFIRM_META]: `create-another ${state}` } },
          undefined,
          REQ,
        );
        assert.equal(again.isError, false, textOf(again));
        assert.equal(/** @type {any} */ (again.structuredContent)?.po_number, secondPo);
        assert.equal(/** @type {any} */ (again._meta)?.replayed, true);
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort());

        // "use existing" through callTool's _meta: the existing draft, nothing new.
        const thirdArgs = poArgs(`v1-third-${randomUUID()}`);
        const third = await call(thirdArgs);
        assert.equal(third._meta?.error?.code, "INPUT_REQUIRED", JSON.stringify(third));
        const thirdState = third._meta.error.inputRequired.requestState;
        const named = third._meta.error.inputRequired.existing.number;
        const existing = await client.callTool(
          { name: DRAFT, arguments: thirdArgs, _meta: { [CONFIRM_META]: `use-existing ${thirdState}` } },
          undefined,
          REQ,
        );
        assert.equal(existing.isError, false, textOf(existing));
        assert.equal(/** @type {any} */ (existing.structuredContent)?.po_number, named);
        assert.deepEqual(await draftNumbers(search), [...before, firstPo, secondPo].sort(), "use-existing creates nothing");
      } finally {
        await client.close();
      }
    } catch (err) {
      throw new Error(`${/** @type {Error} */ (err).message}\n--- server output ---\n${server.output().slice(-4000)}`, { cause: err });
    } finally {
      await server.stop();
    }
  });

  // A 2025-11-25 client is never sent an elicitation: the text a model reads must name the
  // _meta key such a client confirms through, not only the structured error.
  test(
    "the INPUT_REQUIRED text tells a 2025-11-25 MCP client to confirm through _meta[\"io.draftline/confirm\"]",
    { timeout: 120_000 },
    async () => {
      const server = await startDraftline();
      try {
        const client = await connectV1(server, await server.token("buyer-sby"));
        try {
          const { asked } = await askedOnce(client);
          assert.equal(asked._meta?.error?.code, "INPUT_REQUIRED", JSON.stringify(asked));
          const message = asked.content?.[0]?.text ?? "";
          assert.ok(message.includes(CONFIRM_META), `the message does not name ${CONFIRM_META}: ${message}`);
        } finally {
          await client.close();
        }
      } finally {
        await server.stop();
      }
    },
  );
});
