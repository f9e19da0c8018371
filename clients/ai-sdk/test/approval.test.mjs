// @ts-check
// Tool approval through the real AI SDK 7 (`generateText` + `toolApproval` +
// `MockLanguageModelV4`) against a local draftline server: a draft tool asks a person, a
// read tool does not; an approved call's decision and reason reach the audit item; a
// denied call never reaches the server; the caller's overrides per tool and per tier.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions, callOptions } from "./support/approval.mjs";
import { auditRows } from "./support/audit.mjs";
import { isoDate, startDraftline } from "./support/draftline-server.mjs";
import { argsFromSchema, posIn } from "./support/tool-args.mjs";

const READ = "inventory_get_stock";
const DRAFT = "purchasing_create_po_draft";
const GET_PO = "purchasing_get_po";
const SEARCH = "purchasing_search_pos";
/** A person's reason, in Indonesian with a dash, a check mark and an emoji (UTF-8 beyond Latin-1). */
const PERSON_REASON = "Budi (kepala pembelian): stok di bawah titik pesan ulang — disetujui ✓ 📦";

/** @typedef {import("@ai-sdk/provider").LanguageModelV4GenerateResult} GenerateResult */
/** @typedef {{ url: string, method: string, headers: Headers, body: any }} Sent */

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/**
 * One model step that calls the given tools (in parallel).
 * @param {Array<[toolCallId: string, toolName: string, input: unknown]>} calls
 * @returns {GenerateResult}
 */
function toolCalls(...calls) {
  return {
    content: calls.map(([toolCallId, toolName, input]) => ({
      type: /** @type {const} */ ("tool-call"),
      toolCallId,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/**
 * @param {string} text
 * @returns {GenerateResult}
 */
function finalText(text) {
  return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
}

/** A fetch that records every request it forwards. */
function recordingFetch() {
  /** @type {Sent[]} */
  const sent = [];
  /** @type {typeof fetch} */
  const wrapped = async (input, init) => {
    sent.push({
      url: String(input instanceof Request ? input.url : input),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    });
    return fetch(input, init);
  };
  return { fetch: wrapped, sent, posts: () => sent.filter((s) => s.method === "POST") };
}

/**
 * A PO draft input with a fresh client_ref.
 * @param {string} tag
 */
function draftInput(tag) {
  return {
    vendor_code: "V-00231",
    needed_by: isoDate(14),
    client_ref: `approval-${tag}-${randomUUID()}`,
    note: null,
    lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
  };
}

/**
 * The tool results in a call's response messages (these include the approved calls the
 * SDK runs before the first model step of a resumed call, and the denials).
 * @param {{ responseMessages: import("ai").ModelMessage[] }} result
 * @returns {Map<string, import("ai").ToolResultPart["output"]>}
 */
function resultsById(result) {
  const out = new Map();
  for (const m of result.responseMessages) {
    if (m.role !== "tool") continue;
    for (const p of m.content) if (p.type === "tool-result") out.set(p.toolCallId, p.output);
  }
  return out;
}

describe("tool approval (AI SDK 7 toolApproval)", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  /** @type {string} */
  let buyer;
  before(async () => {
    // Every test here drafts the same item from the same vendor under its own key: the
    // ask-rather-than-guess check (its own suite in mcp-client-tests) would rightly stop
    // the second one, so it is off for this server.
    server = await startDraftline({ env: { DRAFTLINE_NEAR_DUPLICATE_HOURS: "0" } });
    buyer = await server.token("buyer-sby");
  });
  after(async () => {
    await server?.stop();
  });

  test("a draft tool asks for approval and a read tool does not; the approval and its reason reach the audit item", { timeout: 90_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const { tools, toolApproval } = await draftlineTools({
      baseUrl: server.url,
      token: buyer,
      runId,
      model: "mock-model-id",
      promptVersion: "approval-v1",
      fetch: rec.fetch,
    });
    const input = draftInput("approved");
    const model = new MockLanguageModelV4({
      modelId: "mock-model-id",
      doGenerate: [toolCalls(["call_read", READ, { item_code: "BRG-0042" }], ["call_draft", DRAFT, input]), finalText("Drafted.")],
    });
    /** @type {import("ai").ModelMessage[]} */
    const messages = [{ role: "user", content: "Check BRG-0042 and draft a PO from V-00231." }];

    // 1. The read runs at once; the draft stops the loop with an approval request.
    const first = await generateText({ model, tools, toolApproval, messages, stopWhen: isStepCount(5) });
    const requests = first.content.filter((p) => p.type === "tool-approval-request");
    assert.deepEqual(
      requests.map((r) => [r.toolCall.toolName, r.toolCall.toolCallId, r.isAutomatic ?? false]),
      [[DRAFT, "call_draft", false]],
      "one approval request, for the draft, waiting for a person",
    );
    assert.match(requests[0]?.reason ?? "", new RegExp(`^${DRAFT} .*draft tool.*writes to the ERP`));
    // What an approval UI can show: the tool's title, module and tier (not sent to the model).
    const meta = /** @type {any} */ (requests[0]?.toolCall.toolMetadata)?.draftline;
    assert.deepEqual({ ...meta, title: typeof meta?.title }, { title: "string", module: "purchasing", tier: "draft", writes: true });
    assert.deepEqual(
      first.toolResults.map((r) => r.toolCallId),
      ["call_read"],
    );
    assert.deepEqual(
      rec.posts().map((p) => [new URL(p.url).pathname, p.headers.get("x-tool-call-id")]),
      [[`/api/${READ}`, "call_read"]],
      "nothing was sent for the draft before it was approved",
    );
    const readPost = rec.posts()[0];
    assert.equal(readPost?.headers.get("x-tool-approval"), "not-required");
    assert.equal(readPost?.headers.get("x-tool-approval-reason"), null);

    // 2. A person approves, with a reason; the same loop resumes and runs the draft.
    messages.push(...first.responseMessages, {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: requests[0]?.approvalId ?? "", approved: true, reason: PERSON_REASON }],
    });
    const second = await generateText({ model, tools, toolApproval, messages, stopWhen: isStepCount(5) });
    assert.equal(second.text, "Drafted.");
    const draftOut = resultsById(second).get("call_draft");
    assert.equal(draftOut?.type, "json", JSON.stringify(draftOut));
    const po = /** @type {any} */ (draftOut?.type === "json" ? draftOut.value : undefined);
    assert.match(po?.po_number, /^PO-SBY-\d+$/);
    assert.equal(po.client_ref, input.client_ref);

    const posts = rec.posts();
    assert.equal(posts.length, 2);
    const draftPost = posts[1];
    assert.ok(draftPost);
    assert.equal(new URL(draftPost.url).pathname, `/api/${DRAFT}`);
    assert.deepEqual(draftPost.body, input);
    assert.equal(draftPost.headers.get("x-tool-call-id"), "call_draft");
    assert.equal(draftPost.headers.get("x-agent-run-id"), runId);
    assert.equal(draftPost.headers.get("x-agent-model"), "mock-model-id");
    assert.equal(draftPost.headers.get("x-prompt-version"), "approval-v1");
    assert.equal(draftPost.headers.get("x-tool-approval"), "approved");
    const encoded = draftPost.headers.get("x-tool-approval-reason") ?? "";
    assert.equal(encoded, encodeURIComponent(PERSON_REASON));
    assert.match(encoded, /^[A-Za-z0-9%\-_.!~*'()]+$/, "percent-encoded: plain ASCII on the wire");
    assert.equal(decodeURIComponent(encoded), PERSON_REASON);

    // 3. The audit: the draft approved with the person's reason, the read not-required.
    const rows = await auditRows(server, runId);
    const byCall = Object.fromEntries(rows.map((r) => [r.toolCallId, r]));
    assert.deepEqual(Object.keys(byCall).sort(), ["call_draft", "call_read"], JSON.stringify(rows));
    assert.equal(byCall.call_draft?.tool, DRAFT);
    assert.equal(byCall.call_draft?.outcome, "ok");
    assert.equal(byCall.call_draft?.document, po.po_number);
    assert.equal(byCall.call_draft?.approval, "approved", JSON.stringify(byCall.call_draft));
    assert.equal(byCall.call_draft?.approvalReason, PERSON_REASON, JSON.stringify(byCall.call_draft));
    assert.equal(byCall.call_read?.tool, READ);
    assert.equal(byCall.call_read?.approval, "not-required", JSON.stringify(byCall.call_read));
    assert.equal(byCall.call_read?.approvalReason, undefined);
  });

  test("a long, multi-line reason reaches the audit as one line of 500 characters; the approved call succeeds", { timeout: 60_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const { tools } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
    const input = draftInput("long-reason");
    const reason = `Approved.\nChecked with the warehouse — ✓ 📦\t${"sehr gut ".repeat(80)}`;
    const expected = Array.from(reason.replace(/\s+/g, " ")).slice(0, 500).join("").trimEnd();
    const out = /** @type {any} */ (
      await tools[DRAFT]?.execute?.(input, approvedCallOptions({ toolName: DRAFT, toolCallId: "call_long", input, reason }))
    );
    assert.equal(out?.status, "draft", `the server accepted the approval headers: ${JSON.stringify(out)}`);
    assert.equal(decodeURIComponent(rec.posts()[0]?.headers.get("x-tool-approval-reason") ?? ""), expected);
    const [row] = await auditRows(server, runId);
    assert.equal(row?.toolCallId, "call_long");
    assert.equal(row?.approval, "approved", JSON.stringify(row));
    assert.equal(row?.approvalReason, expected);
    assert.equal(Array.from(row?.approvalReason ?? "").length, 500);
  });

  test("a denied approval never reaches the tool function: no request, no audit item, no document", { timeout: 90_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const { tools, toolApproval, definitions } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
    const input = draftInput("denied");
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls(["call_denied", DRAFT, input]), finalText("Understood, no draft.")],
    });
    /** @type {import("ai").ModelMessage[]} */
    const messages = [{ role: "user", content: "Draft a PO from V-00231 for BRG-0042." }];
    const first = await generateText({ model, tools, toolApproval, messages, stopWhen: isStepCount(5) });
    const request = first.content.find((p) => p.type === "tool-approval-request");
    assert.ok(request && request.toolCall.toolCallId === "call_denied");

    messages.push(...first.responseMessages, {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: false, reason: "Not this vendor" }],
    });
    const second = await generateText({ model, tools, toolApproval, messages, stopWhen: isStepCount(5) });
    assert.equal(second.text, "Understood, no draft.");
    assert.deepEqual(resultsById(second).get("call_denied"), { type: "execution-denied", reason: "Not this vendor" });
    // The model was told, in the prompt of its second step.
    const prompt = model.doGenerateCalls[1]?.prompt ?? [];
    const told = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
    assert.deepEqual(told && told.type === "tool-result" ? told.output : undefined, { type: "execution-denied", reason: "Not this vendor" });

    // Nothing went over the wire but the listing.
    assert.deepEqual(
      rec.sent.map((s) => `${s.method} ${new URL(s.url).pathname}`),
      ["GET /api/tools"],
    );
    // No audit item for the run, and no PO with the call's client_ref.
    assert.deepEqual(await auditRows(server, runId), []);
    const searchDef = definitions.find((d) => d.name === SEARCH);
    assert.ok(searchDef, `${SEARCH} is in buyer-sby's tools`);
    const found = await tools[SEARCH]?.execute?.(argsFromSchema(searchDef.inputSchema, SEARCH), callOptions("check_search"));
    assert.equal(typeof found, "object", String(found));
    assert.deepEqual(posIn(found).filter((p) => p.client_ref === input.client_ref), []);
  });

  test("an automatic denial by the caller's rule also never reaches the server", { timeout: 60_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const { tools, toolApproval } = await draftlineTools({
      baseUrl: server.url,
      token: buyer,
      runId,
      fetch: rec.fetch,
      approval: { tools: { [DRAFT]: { type: "denied", reason: "Drafting is paused during stock-take" } } },
    });
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls(["call_auto_denied", DRAFT, draftInput("auto-denied")]), finalText("Paused.")],
    });
    const result = await generateText({ model, tools, toolApproval, prompt: "Draft it.", stopWhen: isStepCount(5) });
    assert.equal(result.text, "Paused.");
    const response = result.content.find((p) => p.type === "tool-approval-response");
    assert.deepEqual(response && [response.approved, response.reason], [false, "Drafting is paused during stock-take"]);
    assert.deepEqual(rec.posts(), []);
    assert.deepEqual(await auditRows(server, runId), []);
  });

  test("the caller overrides the policy per tier and per tool name", { timeout: 90_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const AUTO = "Auto-approved: one box, preferred vendor";
    const { tools, toolApproval } = await draftlineTools({
      baseUrl: server.url,
      token: buyer,
      runId,
      fetch: rec.fetch,
      approval: {
        tiers: { read: "user-approval" }, // every read asks now…
        tools: {
          [GET_PO]: "not-applicable", // …except this one (a name wins over its tier)
          // A rule of the input: one line is approved automatically, with a reason.
          [DRAFT]: (input) =>
            /** @type {any} */ (input).lines.length === 1 ? { type: "approved", reason: AUTO } : "user-approval",
        },
      },
    });
    const input = draftInput("auto");
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls(["call_r", READ, { item_code: "BRG-0042" }], ["call_d", DRAFT, input]), finalText("Waiting.")],
    });
    const result = await generateText({ model, tools, toolApproval, prompt: "Check and draft.", stopWhen: isStepCount(5) });

    // The read waits for a person now; the draft was approved by the rule and ran.
    const requests = result.content.filter((p) => p.type === "tool-approval-request");
    assert.deepEqual(
      requests.map((r) => [r.toolCall.toolCallId, r.isAutomatic ?? false]).sort(),
      [
        ["call_d", true],
        ["call_r", false],
      ],
    );
    assert.deepEqual(
      rec.posts().map((p) => [new URL(p.url).pathname, p.headers.get("x-tool-approval"), p.headers.get("x-tool-approval-reason")]),
      [[`/api/${DRAFT}`, "approved", encodeURIComponent(AUTO)]],
    );
    const po = /** @type {any} */ (result.toolResults.find((r) => r.toolCallId === "call_d")?.output);
    assert.match(po?.po_number ?? "", /^PO-SBY-\d+$/, JSON.stringify(po));

    // Outside the SDK's approval step the same rules hold: the read that must ask is not
    // sent; the tool named in the overrides runs as not-required.
    const refused = await tools[READ]?.execute?.({ item_code: "BRG-0042" }, callOptions("direct_read"));
    assert.match(String(refused), /^Error APPROVAL_REQUIRED \(not retryable\): inventory_get_stock /);
    assert.equal(rec.posts().length, 1);
    const got = /** @type {any} */ (await tools[GET_PO]?.execute?.({ po_number: po.po_number }, callOptions("direct_get")));
    assert.equal(got?.po_number, po.po_number, JSON.stringify(got));
    assert.equal(rec.posts()[1]?.headers.get("x-tool-approval"), "not-required");

    const rows = await auditRows(server, runId);
    const byCall = Object.fromEntries(rows.map((r) => [r.toolCallId, r]));
    assert.deepEqual(Object.keys(byCall).sort(), ["call_d", "direct_get"], JSON.stringify(rows));
    assert.equal(byCall.call_d?.approval, "approved", JSON.stringify(byCall.call_d));
    assert.equal(byCall.call_d?.approvalReason, AUTO);
    assert.equal(byCall.direct_get?.approval, "not-required", JSON.stringify(byCall.direct_get));
    assert.equal(byCall.direct_get?.approvalReason, undefined);
  });
});
