// @ts-check
// The approval policy and the approval headers, without a server: a stub fetch serves a
// tool list and records every request. Covers what the server-backed tests cannot reach
// cheaply: the policy's defaults from tier and annotations, the reason's encoding and
// limits, the execute-side guard, and streamText.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, isStepCount, simulateReadableStream, streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { MAX_APPROVAL_REASON_LENGTH, draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions, callOptions } from "./support/approval.mjs";

const BASE = "http://draftline.test";

/**
 * @param {string} name
 * @param {string} tier
 * @param {Record<string, boolean>} [annotations]
 */
function def(name, tier, annotations) {
  return {
    name,
    title: `Title of ${name}`,
    description: `Does ${name}.`,
    module: name.split("_")[0],
    tier,
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    url: `${BASE}/api/${name}`,
    ...(annotations ? { annotations } : {}),
  };
}

const DEFS = [
  def("stock_read", "read"),
  def("po_draft", "draft"),
  def("annotated_read", "read", { readOnlyHint: false }), // the annotations say it writes
  def("future_post", "post"), // a tier this client does not know
  def("annotated_ro", "read", { readOnlyHint: true, destructiveHint: false }),
];

/**
 * A stub deployment: the listing, and `{ok: true}` for every tool call.
 * @returns {{ fetch: typeof fetch, calls: Array<{ url: string, headers: Headers }> }}
 */
function stub() {
  /** @type {Array<{ url: string, headers: Headers }>} */
  const calls = [];
  /** @type {typeof fetch} */
  const f = async (input, init) => {
    const url = String(input);
    if (url === `${BASE}/api/tools?format=ai-sdk`) {
      return Response.json({ version: 1, resource: BASE, tools: DEFS });
    }
    calls.push({ url, headers: new Headers(init?.headers) });
    return Response.json({ ok: true, data: { ran: url.slice(`${BASE}/api/`.length) }, replayed: false, requestId: "r1" });
  };
  return { fetch: f, calls };
}

/** @param {import("@draftline/ai-sdk").DraftlineToolsOptions["approval"]} [approval] */
async function setUp(approval) {
  const s = stub();
  const set = await draftlineTools({ baseUrl: BASE, token: "t", runId: "run-unit", fetch: s.fetch, approval });
  return { ...s, ...set };
}

/** The status a tool's entry of `toolApproval` returns for one call. */
async function statusOf(/** @type {any} */ toolApproval, /** @type {string} */ name, input = {}) {
  return toolApproval[name](input, { toolCallId: `c-${name}`, messages: [], toolContext: undefined, runtimeContext: {} });
}

describe("approval policy", () => {
  test("defaults: read tools never ask; draft tools, tools annotated as writing and unknown tiers ask a person", async () => {
    const { toolApproval, tools } = await setUp();
    assert.deepEqual(Object.keys(toolApproval).sort(), Object.keys(tools).sort());
    assert.deepEqual(await statusOf(toolApproval, "stock_read"), { type: "not-applicable" });
    assert.deepEqual(await statusOf(toolApproval, "annotated_ro"), { type: "not-applicable" });
    for (const name of ["po_draft", "annotated_read", "future_post"]) {
      const status = await statusOf(toolApproval, name);
      assert.equal(status.type, "user-approval", name);
      assert.match(status.reason, new RegExp(`^${name} \\(Title of ${name}\\) is a \\w+ tool: it writes to the ERP`));
    }
  });

  test("overrides: a rule per tool name wins over a rule per tier; a rule may be a function of the input", async () => {
    const { toolApproval } = await setUp({
      tiers: { read: "user-approval", draft: { type: "approved", reason: "tier rule" } },
      tools: {
        annotated_ro: "not-applicable",
        future_post: (/** @type {any} */ input) => (input.big ? "user-approval" : { type: "denied", reason: "small posts are off" }),
      },
    });
    assert.deepEqual(await statusOf(toolApproval, "stock_read"), { type: "user-approval" });
    assert.deepEqual(await statusOf(toolApproval, "annotated_ro"), { type: "not-applicable" });
    assert.deepEqual(await statusOf(toolApproval, "po_draft"), { type: "approved", reason: "tier rule" });
    assert.deepEqual(await statusOf(toolApproval, "future_post", { big: true }), { type: "user-approval" });
    assert.deepEqual(await statusOf(toolApproval, "future_post", {}), { type: "denied", reason: "small posts are off" });
  });

  test("X-Tool-Approval-Reason: percent-encoded UTF-8, one line, at most 500 characters; none without a reason", async () => {
    const { tools, calls } = await setUp();
    const draft = tools.po_draft;
    assert.ok(draft?.execute);
    assert.equal(MAX_APPROVAL_REASON_LENGTH, 500);
    const run = async (/** @type {string | undefined} */ reason) => {
      const id = `call_${calls.length}`;
      await draft.execute?.({}, approvedCallOptions({ toolName: "po_draft", toolCallId: id, input: {}, reason }));
      const sent = calls.at(-1);
      assert.equal(sent?.headers.get("x-tool-call-id"), id);
      assert.equal(sent?.headers.get("x-tool-approval"), "approved");
      return sent?.headers.get("x-tool-approval-reason") ?? null;
    };

    assert.equal(await run("Disetujui ✓ — Budi 📦"), encodeURIComponent("Disetujui ✓ — Budi 📦"));
    assert.equal(await run(undefined), null, "no reason: no header");
    assert.equal(await run(""), null, "an empty reason is no reason");
    assert.equal(await run(" \n\t "), null, "a blank reason is no reason");
    // Line breaks and other control characters (which the server refuses) become spaces.
    assert.equal(decodeURIComponent((await run("  ok,\r\nship it\u0007 \ttoday ")) ?? ""), "ok, ship it today");
    // A lone surrogate would make encodeURIComponent throw: it becomes U+FFFD.
    assert.equal(decodeURIComponent((await run("bad \ud800 half")) ?? ""), "bad \ufffd half");

    // 600 code points, many of them outside the BMP (two UTF-16 units each): cut at 500 code points.
    const long = "📦é".repeat(300);
    const header = (await run(long)) ?? "";
    assert.match(header, /^[A-Za-z0-9%\-_.!~*'()]+$/);
    const decoded = decodeURIComponent(header);
    assert.equal(Array.from(decoded).length, 500);
    assert.equal(decoded, "📦é".repeat(250));
  });

  test("a read tool that needs no approval sends X-Tool-Approval: not-required and no reason", async () => {
    const { tools, calls } = await setUp();
    const out = await tools.stock_read?.execute?.({}, callOptions("call_read"));
    assert.deepEqual(out, { ran: "stock_read" });
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.headers.get("x-tool-approval"), "not-required");
    assert.equal(calls[0]?.headers.get("x-tool-approval-reason"), null);
    assert.equal(calls[0]?.headers.get("x-tool-call-id"), "call_read");
    assert.equal(calls[0]?.headers.get("x-agent-run-id"), "run-unit");
  });

  test("a draft run without approval (toolApproval not passed, or a direct call) is refused without a request", async () => {
    const { tools, calls } = await setUp();
    const direct = String(await tools.po_draft?.execute?.({}, callOptions("call_direct")));
    assert.match(direct, /^Error APPROVAL_REQUIRED \(not retryable\): po_draft runs only after a person approves/);
    assert.match(direct, /Nothing was sent to the ERP; no draft was created\./);

    // generateText without toolApproval: the SDK runs the tool, the tool refuses.
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [{ type: "tool-call", toolCallId: "call_sdk", toolName: "po_draft", input: "{}" }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
          warnings: [],
        },
        {
          content: [{ type: "text", text: "ok" }],
          finishReason: { unified: "stop", raw: undefined },
          usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
          warnings: [],
        },
      ],
    });
    const result = await generateText({ model, tools, prompt: "draft", stopWhen: isStepCount(3) });
    assert.match(String(result.toolResults[0]?.output), /^Error APPROVAL_REQUIRED/);

    // A denial recorded in the history is honoured too.
    const denied = String(
      await tools.po_draft?.execute?.(
        {},
        approvedCallOptions({ toolName: "po_draft", toolCallId: "call_no", input: {}, approved: false, reason: "no\nway" }),
      ),
    );
    assert.match(denied, /^Error APPROVAL_DENIED \(not retryable\): the call of po_draft was denied: no way\. Nothing was sent/);
    assert.deepEqual(calls, [], "no request reached the deployment");
  });

  test("a rule that denies wins over an approval in the message history", async () => {
    const { tools, calls } = await setUp({ tools: { po_draft: { type: "denied", reason: "Drafts are frozen" } } });
    const out = String(
      await tools.po_draft?.execute?.({}, approvedCallOptions({ toolName: "po_draft", toolCallId: "call_forged", input: {}, reason: "ok" })),
    );
    assert.match(out, /^Error APPROVAL_DENIED \(not retryable\): the call of po_draft was denied: Drafts are frozen\. /);
    assert.deepEqual(calls, []);
  });

  test("streamText: the read runs as not-required, an automatic approval carries its reason, a manual one waits", async () => {
    const { tools, toolApproval, calls } = await setUp({
      tools: { future_post: { type: "approved", reason: "auto: weekly post" } },
    });
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
    /** @param {Array<import("@ai-sdk/provider").LanguageModelV4StreamPart>} chunks */
    const stream = (chunks) => ({ stream: simulateReadableStream({ chunks }) });
    const model = new MockLanguageModelV4({
      doStream: [
        stream([
          { type: "stream-start", warnings: [] },
          { type: "tool-call", toolCallId: "s_read", toolName: "stock_read", input: "{}" },
          { type: "tool-call", toolCallId: "s_post", toolName: "future_post", input: "{}" },
          { type: "tool-call", toolCallId: "s_draft", toolName: "po_draft", input: "{}" },
          { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
        ]),
      ],
    });
    const result = streamText({ model, tools, toolApproval, prompt: "go", stopWhen: isStepCount(3) });
    const content = await result.content;
    const requests = content.filter((p) => p.type === "tool-approval-request");
    assert.deepEqual(
      requests.map((r) => [r.toolCall.toolCallId, r.isAutomatic ?? false]).sort(),
      [
        ["s_draft", false],
        ["s_post", true],
      ],
    );
    assert.deepEqual(
      calls.map((c) => [c.headers.get("x-tool-call-id"), c.headers.get("x-tool-approval"), c.headers.get("x-tool-approval-reason")]).sort(),
      [
        ["s_post", "approved", encodeURIComponent("auto: weekly post")],
        ["s_read", "not-required", null],
      ],
    );
  });
});
