// @ts-check
// The reorder story through the real AI SDK 7 (`generateText` + `MockLanguageModelV4`, no
// network besides the local draftline server): list items below reorder → create a PO
// draft (tool call A) → the response is lost (the client times out) → the model calls the
// same draft again (tool call B, same arguments, same run id) → exactly one draft exists.
// The run's policy approves drafts automatically (an override of the default, which asks a
// person; test/approval.test.mjs covers that), so every draft call is audited as approved.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { draftlineTools } from "@draftline/ai-sdk";
import { DynamoDBClient, QueryCommand } from "@aws-sdk/client-dynamodb";
import { isoDate, startDraftline } from "./support/draftline-server.mjs";
import { argsFromSchema, posIn } from "./support/tool-args.mjs";

const LIST = "inventory_list_below_reorder";
const DRAFT = "purchasing_create_po_draft";
const GET_PO = "purchasing_get_po";
const SEARCH = "purchasing_search_pos";
const CALL_A = "call_draft_A";
const CALL_B = "call_draft_B";
const TIMEOUT_MS = 5_000;
/** The run's automatic approval of drafts, and its reason (non-ASCII on purpose). */
const AUTO_REASON = "Reorder policy: below the reorder point, preferred vendor — auto-approved ✓";

/** @typedef {import("@ai-sdk/provider").LanguageModelV4GenerateResult} GenerateResult */
/** @typedef {import("@ai-sdk/provider").LanguageModelV4Prompt} Prompt */
/** @typedef {import("@ai-sdk/provider").LanguageModelV4ToolResultOutput} ToolResultOutput */
/**
 * @typedef {object} Exchange   one HTTP exchange seen by the recording fetch
 * @property {string} url
 * @property {string} method
 * @property {Headers} requestHeaders
 * @property {any} requestBody
 * @property {number} status
 * @property {Headers} responseHeaders
 * @property {any} responseBody
 * @property {boolean} lost      the test dropped this response to simulate a timeout
 */

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/**
 * @param {string} toolCallId
 * @param {string} toolName
 * @param {unknown} input
 * @returns {GenerateResult}
 */
function toolCallStep(toolCallId, toolName, input) {
  return {
    content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/**
 * The tool result the model was given for `toolCallId`, read from the prompt.
 * @param {Prompt} prompt
 * @param {string} toolCallId
 * @returns {ToolResultOutput}
 */
function resultFor(prompt, toolCallId) {
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result" && part.toolCallId === toolCallId) return part.output;
    }
  }
  throw new Error(`the model was not given a result for ${toolCallId}`);
}

/**
 * A fetch that records every exchange, and loses the response of the first draft call:
 * the request reaches the server (which creates the draft), then the client waits until
 * its own time limit aborts the request, as if the network dropped the answer.
 * @returns {{ fetch: typeof fetch, exchanges: Exchange[] }}
 */
function recordingFetch() {
  /** @type {Exchange[]} */
  const exchanges = [];
  let dropped = false;
  /** @type {typeof fetch} */
  const wrapped = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const res = await fetch(input, init);
    const text = await res.text();
    const lose = !dropped && url.endsWith(`/api/${DRAFT}`);
    exchanges.push({
      url,
      method: init?.method ?? "GET",
      requestHeaders: new Headers(init?.headers),
      requestBody: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
      status: res.status,
      responseHeaders: res.headers,
      responseBody: JSON.parse(text),
      lost: lose,
    });
    if (lose) {
      dropped = true;
      const signal = init?.signal;
      if (!signal) throw new Error("draftline tool calls must carry an abort signal (time limit)");
      await new Promise((_, reject) => {
        const guard = setTimeout(() => reject(new Error("the client never timed out")), TIMEOUT_MS + 10_000);
        signal.addEventListener("abort", () => {
          clearTimeout(guard);
          reject(signal.reason);
        });
      });
    }
    return new Response(text, { status: res.status, headers: res.headers });
  };
  return { fetch: wrapped, exchanges };
}

describe("AI SDK reorder workflow", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  before(async () => {
    server = await startDraftline();
  });
  after(async () => {
    await server?.stop();
  });

  test("list below reorder → draft → timeout → retried draft is a replay of the same PO", { timeout: 90_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const buyer = await server.token("buyer-sby");
    const { fetch: recFetch, exchanges } = recordingFetch();
    let tokenCalls = 0;
    const { tools, toolApproval } = await draftlineTools({
      baseUrl: server.url,
      token: async () => {
        tokenCalls += 1;
        return buyer;
      },
      runId,
      model: "mock-model-id",
      promptVersion: "reorder-v1",
      fetch: recFetch,
      timeoutMs: TIMEOUT_MS,
      approval: { tools: { [DRAFT]: { type: "approved", reason: AUTO_REASON } } },
    });
    assert.ok(
      LIST in tools,
      `${LIST} is not in buyer-sby's tool list (${Object.keys(tools).join(", ")}); this workflow needs it`,
    );
    assert.ok(DRAFT in tools && GET_PO in tools, `tool list: ${Object.keys(tools).join(", ")}`);

    const listing = exchanges[0]?.responseBody;
    assert.equal(listing?.resource, server.url);
    /** @type {Record<string, any>} */
    const defs = Object.fromEntries(listing.tools.map((/** @type {any} */ t) => [t.name, t]));

    // The list tool's arguments from its own schema: the largest page, every other field null.
    const listInput = argsFromSchema(defs[LIST].inputSchema, LIST);
    /** The draft the model derives from the reorder list (set in step 1). */
    /** @type {{ vendor_code: string, needed_by: string, client_ref: string, note: string | null, lines: Array<{ item_code: string, qty: number, uom: string }> }} */
    let draftInput = /** @type {any} */ (undefined);

    /** @type {string[]} */
    const modelSaw = [];
    const model = new MockLanguageModelV4({
      modelId: "mock-model-id",
      doGenerate: async ({ prompt }) => {
        const step = modelSaw.length;
        if (step === 0) {
          modelSaw.push("start");
          return toolCallStep("call_list", LIST, listInput);
        }
        if (step === 1) {
          const out = resultFor(prompt, "call_list");
          modelSaw.push(JSON.stringify(out));
          assert.equal(out.type, "json", `${LIST} failed: ${JSON.stringify(out)}`);
          // Like a model would: take BRG-0042's suggestion (quantity, unit, preferred vendor).
          const item = /** @type {any} */ (out.value)?.items?.find((/** @type {any} */ i) => i.item_code === "BRG-0042");
          assert.ok(item, `BRG-0042 is below reorder in SBY-01's demo data: ${JSON.stringify(out.value)}`);
          draftInput = {
            vendor_code: item.preferred_vendor.code,
            needed_by: isoDate(14),
            client_ref: `reorder-${isoDate()}-BRG-0042`,
            note: `Reorder: available ${item.available} is at or below the reorder point ${item.reorder_point}.`,
            lines: [{ item_code: "BRG-0042", qty: item.suggested_qty, uom: item.suggested_uom }],
          };
          return toolCallStep(CALL_A, DRAFT, draftInput);
        }
        if (step === 2) {
          const out = resultFor(prompt, CALL_A);
          modelSaw.push(JSON.stringify(out));
          return toolCallStep(CALL_B, DRAFT, draftInput); // the model retries after the timeout
        }
        const out = resultFor(prompt, CALL_B);
        modelSaw.push(JSON.stringify(out));
        const po = out.type === "json" ? /** @type {any} */ (out.value)?.po_number : undefined;
        return {
          content: [{ type: "text", text: `Drafted ${po}; it awaits review by a person.` }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      },
    });

    const result = await generateText({
      model,
      tools,
      toolApproval,
      stopWhen: isStepCount(6),
      prompt: "Turn today's reorder alerts for BRG-0042 into a purchase-order draft for vendor V-00231.",
    });

    // The model was offered the server's strict schemas unchanged.
    const offered = model.doGenerateCalls[0]?.tools ?? [];
    const offeredDraft = offered.find((t) => t.name === DRAFT);
    assert.ok(offeredDraft && offeredDraft.type === "function");
    assert.deepEqual(offeredDraft.inputSchema, defs[DRAFT].inputSchema);
    assert.equal(offeredDraft.strict, true);
    assert.equal(offeredDraft.description, defs[DRAFT].description);

    // Four model steps: list, draft A, draft B, final text.
    assert.equal(result.steps.length, 4, `steps: ${modelSaw.join("\n")}`);
    assert.deepEqual(
      result.steps.map((s) => s.toolCalls.map((c) => `${c.toolName}#${c.toolCallId}`)),
      [[`${LIST}#call_list`], [`${DRAFT}#${CALL_A}`], [`${DRAFT}#${CALL_B}`], []],
    );

    // The policy approved both drafts automatically and asked nothing for the list.
    assert.deepEqual(
      result.content
        .filter((p) => p.type === "tool-approval-response")
        .map((p) => [p.toolCall.toolCallId, p.approved, p.reason]),
      [
        [CALL_A, true, AUTO_REASON],
        [CALL_B, true, AUTO_REASON],
      ],
    );
    assert.ok(
      result.content.filter((p) => p.type === "tool-approval-request").every((p) => p.isAutomatic === true),
      "no approval request waits for a person",
    );

    // A: the server created the draft, but the client timed out; the model read a retryable
    // message telling it to repeat the same call.
    const outA = result.steps[1]?.toolResults[0]?.output;
    assert.equal(typeof outA, "string", `A's output: ${JSON.stringify(outA)}`);
    assert.match(String(outA), /^Error TIMEOUT \(retryable\)/);
    assert.match(String(outA), /same client_ref/);

    // B: the replay of A's draft.
    const outB = /** @type {any} */ (result.steps[2]?.toolResults[0]?.output);
    assert.equal(outB?.replayed, true, `B's output: ${JSON.stringify(outB)}`);
    assert.match(outB.po_number, /^PO-SBY-\d+$/);
    assert.equal(outB.status, "draft");
    assert.equal(outB.drafted_by_agent_run, runId);
    assert.equal(outB.drafted_on_behalf_of, "buyer-sby");
    assert.equal(outB.client_ref, draftInput.client_ref);
    assert.equal(result.text, `Drafted ${outB.po_number}; it awaits review by a person.`);

    // What went over the wire: the listing, then one POST per tool call.
    const posts = exchanges.filter((e) => e.method === "POST");
    assert.deepEqual(
      posts.map((e) => `${new URL(e.url).pathname} ${e.requestHeaders.get("x-tool-call-id")} ${e.status}`),
      [`/api/${LIST} call_list 200`, `/api/${DRAFT} ${CALL_A} 201`, `/api/${DRAFT} ${CALL_B} 200`],
    );
    for (const e of posts) {
      assert.equal(e.url, defs[new URL(e.url).pathname.slice("/api/".length)].url);
      assert.equal(e.requestHeaders.get("authorization"), `Bearer ${buyer}`);
      assert.equal(e.requestHeaders.get("x-agent-run-id"), runId);
      assert.equal(e.requestHeaders.get("x-agent-model"), "mock-model-id");
      assert.equal(e.requestHeaders.get("x-prompt-version"), "reorder-v1");
      assert.equal(e.requestHeaders.get("idempotency-key"), null, "drafts are keyed by run id + client_ref");
      if (e.url.endsWith(`/api/${DRAFT}`)) {
        assert.equal(e.requestHeaders.get("x-tool-approval"), "approved");
        assert.equal(e.requestHeaders.get("x-tool-approval-reason"), encodeURIComponent(AUTO_REASON));
      } else {
        assert.equal(e.requestHeaders.get("x-tool-approval"), "not-required");
        assert.equal(e.requestHeaders.get("x-tool-approval-reason"), null);
      }
      assert.equal(e.responseBody.ok, true, JSON.stringify(e.responseBody));
      assert.equal(e.responseHeaders.get("x-request-id"), e.responseBody.requestId);
    }
    assert.equal(tokenCalls, 4, "the token function is asked before every request");
    const [, a, b] = posts;
    assert.ok(a && b);
    assert.deepEqual(a.requestBody, draftInput);
    assert.deepEqual(b.requestBody, draftInput);
    assert.equal(a.lost, true);
    assert.equal(a.responseBody.replayed, false);
    assert.equal(a.responseHeaders.get("idempotent-replayed"), null);
    assert.equal(b.responseBody.replayed, true);
    assert.equal(b.responseHeaders.get("idempotent-replayed"), "true");
    assert.notEqual(a.responseBody.requestId, b.responseBody.requestId);
    // One draft: B returned the document A created.
    assert.equal(b.responseBody.data.draft_id, a.responseBody.data.draft_id);
    assert.equal(b.responseBody.data.po_number, a.responseBody.data.po_number);
    assert.equal(a.responseBody.data.drafted_by_agent_run, runId);

    // The ERP confirms: the PO exists as a draft of this run, and no second number was used.
    const opts = { toolCallId: "check", messages: [], context: undefined };
    const po = /** @type {any} */ (await tools[GET_PO]?.execute?.({ po_number: outB.po_number }, opts));
    assert.equal(po?.po_number, outB.po_number, JSON.stringify(po));
    assert.equal(po.status, "draft");
    assert.equal(po.drafted_by_agent_run, runId);
    const [, prefix, digits] = /^(.*?)(\d+)$/.exec(outB.po_number) ?? [];
    assert.ok(prefix && digits);
    const next = `${prefix}${String(Number(digits) + 1).padStart(digits.length, "0")}`;
    const missing = await tools[GET_PO]?.execute?.({ po_number: next }, opts);
    assert.match(String(missing), /^Error NOT_FOUND \(not retryable\)/, `${next} must not exist`);

    // The audit trail, read from the table itself: one item per call of the run, each naming
    // the run, its tool call, the model, the prompt version and the person it acted for.
    const dynamo = server.dynamodb;
    assert.ok(dynamo, "draftline serve printed its DynamoDB endpoint");
    const ddb = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    try {
      const audit = await ddb.send(
        new QueryCommand({
          TableName: dynamo.table,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": { S: `T#demo#RUN#${runId}` } },
        }),
      );
      const rows = (audit.Items ?? []).map((i) => ({
        tool: i.tool?.S,
        toolCallId: i.tool_call_id?.S,
        outcome: i.outcome?.S,
        run: i.agent_run_id?.S,
        model: i.model?.S,
        prompt: i.prompt_version?.S,
        onBehalfOf: i.on_behalf_of?.S,
        document: i.document_number?.S,
        approval: i.approval?.S,
        approvalReason: i.approval_reason?.S,
      }));
      const drafts = rows.filter((r) => r.tool === DRAFT);
      assert.deepEqual(
        drafts.map((r) => [r.toolCallId, r.outcome, r.document]).sort(),
        [
          [CALL_A, "ok", outB.po_number],
          [CALL_B, "replayed", outB.po_number],
        ],
        JSON.stringify(rows),
      );
      assert.ok(rows.some((r) => r.tool === LIST && r.toolCallId === "call_list"), JSON.stringify(rows));
      // The approval decision and its reason: approved (with the policy's reason) for both
      // draft calls, not-required (and no reason) for every read.
      assert.deepEqual(
        rows.map((r) => [r.toolCallId, r.approval, r.approvalReason]).sort(),
        [
          [CALL_A, "approved", AUTO_REASON],
          [CALL_B, "approved", AUTO_REASON],
          ["call_list", "not-required", undefined],
          ["check", "not-required", undefined],
          ["check", "not-required", undefined],
        ],
        JSON.stringify(rows),
      );
      for (const r of rows.filter((r) => r.toolCallId !== "check")) {
        assert.equal(r.run, runId);
        assert.equal(r.model, "mock-model-id");
        assert.equal(r.prompt, "reorder-v1");
        assert.equal(r.onBehalfOf, "buyer-sby");
      }
    } finally {
      ddb.destroy();
    }

    // Where the catalogue has the PO search, it lists exactly one PO of this run.
    if (SEARCH in tools) {
      const searchInput = argsFromSchema(defs[SEARCH].inputSchema, SEARCH);
      const found = await tools[SEARCH]?.execute?.(searchInput, opts);
      assert.equal(typeof found, "object", `${SEARCH}: ${String(found)}`);
      const ofRun = posIn(found).filter((p) => p.po_number === outB.po_number || p.client_ref === draftInput.client_ref);
      assert.equal(ofRun.length, 1, `${SEARCH} lists the run's PO once: ${JSON.stringify(found)}`);
    }
  });
});
