// @ts-check
// Trace context: each tool call sends the executor's active OpenTelemetry span context
// (W3C `traceparent`, and `tracestate` when non-empty), and the server records its trace id
// as the audit item's `trace_id`. Without @opentelemetry/api installed, or with it but no
// SDK registered, or with no active span, nothing is sent, the call works, and the server
// starts a fresh trace. `traceContext` replaces the active span context.
//
// The OpenTelemetry registration is global to this process (node --test runs each test file
// in its own), so the tests without a registered SDK run first.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { context, createTraceState, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions, callOptions } from "./support/approval.mjs";
import { auditRows } from "./support/audit.mjs";
import { isoDate, startDraftline } from "./support/draftline-server.mjs";

const STOCK = "inventory_get_stock";
const DRAFT = "purchasing_create_po_draft";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
const ZERO_TRACE = "0".repeat(32);

/** Trace ids of every span the tests started: a fresh trace must be none of them. */
const testTraceIds = new Set();

/**
 * A fetch that keeps the request headers of every tool call (POST).
 * @returns {{ fetch: typeof fetch, sent: Headers[] }}
 */
function recordingFetch() {
  /** @type {Headers[]} */
  const sent = [];
  /** @type {typeof fetch} */
  const wrapped = async (input, init) => {
    if (init?.method === "POST") sent.push(new Headers(init.headers));
    return fetch(input, init);
  };
  return { fetch: wrapped, sent };
}

/**
 * The one audit item of `toolCallId` in run `runId`.
 * @param {import("./support/draftline-server.mjs").DraftlineServer} server
 * @param {string} runId
 * @param {string} toolCallId
 */
async function auditOf(server, runId, toolCallId) {
  const rows = (await auditRows(server, runId)).filter((r) => r.toolCallId === toolCallId);
  assert.equal(rows.length, 1, `one audit item for ${toolCallId} in ${runId}: ${JSON.stringify(rows)}`);
  const row = /** @type {import("./support/audit.mjs").AuditRow} */ (rows[0]);
  assert.equal(row.outcome, "ok", JSON.stringify(row));
  return row;
}

/**
 * Asserts a trace id the server started itself: well-formed, not all zeros, and not the
 * trace of any span these tests started.
 * @param {string | undefined} traceId
 */
function assertFreshTrace(traceId) {
  assert.match(String(traceId), TRACE_ID);
  assert.notEqual(traceId, ZERO_TRACE);
  assert.ok(!testTraceIds.has(traceId), `${traceId} is a fresh trace, not one of the test spans'`);
}

/**
 * Asserts the stock answer is the server's data (not an error text).
 * @param {unknown} out
 */
function assertStock(out) {
  assert.equal(typeof out, "object", `the stock call answered data: ${JSON.stringify(out)}`);
  assert.equal(/** @type {any} */ (out)?.item_code, "BRG-0042", JSON.stringify(out));
}

/** A random id of `bytes` bytes, lowercase hex. */
const hexId = (/** @type {number} */ bytes) => randomBytes(bytes).toString("hex");

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

describe("trace context", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  /** @type {string} */
  let buyer;
  before(async () => {
    server = await startDraftline();
    buyer = await server.token("buyer-sby");
  });
  after(async () => {
    await server?.stop();
  });

  test("without @opentelemetry/api installed, the package loads and a call sends no traceparent", { timeout: 60_000 }, async () => {
    // The built package and the client script in a directory whose node_modules holds `ai`
    // (a link to this one's) and no @opentelemetry/api.
    const dir = await mkdtemp(join(tmpdir(), "draftline-ai-sdk-no-otel-"));
    try {
      await mkdir(join(dir, "node_modules"));
      await mkdir(join(dir, "pkg"));
      await symlink(fileURLToPath(new URL("../node_modules/ai", import.meta.url)), join(dir, "node_modules", "ai"), "dir");
      // The built package: every module of dist/.
      await cp(fileURLToPath(new URL("../dist", import.meta.url)), join(dir, "pkg"), { recursive: true });
      await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
      await writeFile(
        join(dir, "client.mjs"),
        `import assert from "node:assert/strict";
await assert.rejects(import("@opentelemetry/api"), { code: "ERR_MODULE_NOT_FOUND" });
const { draftlineTools } = await import("./pkg/index.js");
const sent = [];
const recording = async (input, init) => {
  if (init?.method === "POST") sent.push(Object.fromEntries(new Headers(init.headers)));
  return fetch(input, init);
};
const env = process.env;
const { tools } = await draftlineTools({ baseUrl: env.DL_URL, token: env.DL_TOKEN, runId: env.DL_RUN, fetch: recording });
const output = await tools.${STOCK}.execute({ item_code: "BRG-0042" }, { toolCallId: env.DL_CALL, messages: [], context: undefined });
console.log(JSON.stringify({ sent, output }));
`,
      );
      const runId = `run-${randomUUID()}`;
      const toolCallId = `call_${randomUUID()}`;
      /** @type {string} */
      const stdout = await new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [join(dir, "client.mjs")],
          {
            cwd: dir,
            timeout: 45_000,
            env: { ...process.env, DL_URL: server.url, DL_TOKEN: buyer, DL_RUN: runId, DL_CALL: toolCallId },
          },
          (err, out, errOut) => (err ? reject(new Error(`client.mjs failed: ${err.message}\n${errOut}`)) : resolve(out)),
        );
      });
      const { sent, output } = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
      assertStock(output);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]["x-tool-call-id"], toolCallId, JSON.stringify(sent[0]));
      assert.equal(sent[0].traceparent, undefined);
      assert.equal(sent[0].tracestate, undefined);
      assertFreshTrace((await auditOf(server, runId, toolCallId)).traceId);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("with @opentelemetry/api but no SDK registered, a call inside a span sends no traceparent", { timeout: 30_000 }, async () => {
    const runId = `run-${randomUUID()}`;
    const rec = recordingFetch();
    const { tools } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
    const toolCallId = `call_${randomUUID()}`;
    const out = await trace
      .getTracer("trace-context.test")
      .startActiveSpan("agent step (no SDK)", async (span) => {
        try {
          return await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(toolCallId));
        } finally {
          span.end();
        }
      });
    assertStock(out);
    assert.equal(rec.sent.length, 1);
    assert.equal(rec.sent[0]?.get("traceparent"), null);
    assert.equal(rec.sent[0]?.get("tracestate"), null);
    assertFreshTrace((await auditOf(server, runId, toolCallId)).traceId);
  });

  describe("with an OpenTelemetry SDK registered", () => {
    /** @type {BasicTracerProvider} */
    let provider;
    before(() => {
      provider = new BasicTracerProvider();
      assert.ok(trace.setGlobalTracerProvider(provider), "the tracer provider registered");
      assert.ok(context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
      assert.ok(propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
    });
    after(async () => {
      trace.disable();
      context.disable();
      propagation.disable();
      await provider?.shutdown();
    });
    const tracer = () => trace.getTracer("trace-context.test");

    test("a read and an approved draft inside an active span land in its trace", { timeout: 30_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      const rec = recordingFetch();
      const { tools } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
      const readCall = `call_${randomUUID()}`;
      const draftCall = `call_${randomUUID()}`;
      const draftInput = {
        vendor_code: "V-00231",
        needed_by: isoDate(7),
        client_ref: `trace-${randomUUID()}`,
        note: null,
        lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
      };
      const { spanContext, read, draft } = await tracer().startActiveSpan("agent step", async (span) => {
        try {
          const read = await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(readCall));
          const draft = await tools[DRAFT]?.execute?.(
            draftInput,
            approvedCallOptions({ toolName: DRAFT, toolCallId: draftCall, input: draftInput, reason: "traced" }),
          );
          return { spanContext: span.spanContext(), read, draft };
        } finally {
          span.end();
        }
      });
      testTraceIds.add(spanContext.traceId);
      assert.match(spanContext.traceId, TRACE_ID);
      assert.notEqual(spanContext.traceId, ZERO_TRACE);

      // Both calls sent the span's own traceparent, and no tracestate (the span has none).
      assert.equal(rec.sent.length, 2);
      for (const headers of rec.sent) {
        assert.equal(headers.get("traceparent"), `00-${spanContext.traceId}-${spanContext.spanId}-01`);
        assert.equal(headers.get("tracestate"), null);
      }
      // The server answered as usual.
      assertStock(read);
      const po = /** @type {any} */ (draft);
      assert.equal(typeof po, "object", `the draft call answered data: ${JSON.stringify(draft)}`);
      assert.match(po.po_number, /^PO-SBY-\d+$/);
      assert.equal(po.drafted_by_agent_run, runId);

      // And recorded the span's trace in each call's audit item.
      assert.equal((await auditOf(server, runId, readCall)).traceId, spanContext.traceId);
      const drafted = await auditOf(server, runId, draftCall);
      assert.equal(drafted.traceId, spanContext.traceId);
      assert.equal(drafted.approval, "approved");
    });

    test("a span continuing a remote parent sends its tracestate too", { timeout: 30_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      const rec = recordingFetch();
      const { tools } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
      const toolCallId = `call_${randomUUID()}`;
      const remote = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: hexId(16),
        spanId: hexId(8),
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
        traceState: createTraceState("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
      });
      const { spanContext, out } = await context.with(remote, () =>
        tracer().startActiveSpan("tool step", async (span) => {
          try {
            return { spanContext: span.spanContext(), out: await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(toolCallId)) };
          } finally {
            span.end();
          }
        }),
      );
      testTraceIds.add(spanContext.traceId);
      assert.equal(spanContext.traceId, trace.getSpanContext(remote)?.traceId, "the span continues the remote trace");
      assertStock(out);
      assert.equal(rec.sent.length, 1);
      assert.equal(rec.sent[0]?.get("traceparent"), `00-${spanContext.traceId}-${spanContext.spanId}-01`);
      assert.equal(rec.sent[0]?.get("tracestate"), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
      assert.equal((await auditOf(server, runId, toolCallId)).traceId, spanContext.traceId);
    });

    test("generateText inside an active span: the tool the model calls runs in that trace", { timeout: 30_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      const rec = recordingFetch();
      const { tools, toolApproval } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
      let step = 0;
      const model = new MockLanguageModelV4({
        doGenerate: async () =>
          step++ === 0
            ? {
                content: [
                  { type: "tool-call", toolCallId: "call_traced", toolName: STOCK, input: JSON.stringify({ item_code: "BRG-0042" }) },
                ],
                finishReason: { unified: "tool-calls", raw: "tool_calls" },
                usage,
                warnings: [],
              }
            : { content: [{ type: "text", text: "Checked." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
      });
      const { spanContext, result } = await tracer().startActiveSpan("agent run", async (span) => {
        try {
          const result = await generateText({ model, tools, toolApproval, stopWhen: isStepCount(3), prompt: "Stock of BRG-0042?" });
          return { spanContext: span.spanContext(), result };
        } finally {
          span.end();
        }
      });
      testTraceIds.add(spanContext.traceId);
      assertStock(result.steps[0]?.toolResults[0]?.output);
      assert.equal(rec.sent.length, 1);
      const sent = TRACEPARENT.exec(rec.sent[0]?.get("traceparent") ?? "");
      assert.ok(sent, `a traceparent was sent: ${rec.sent[0]?.get("traceparent")}`);
      assert.equal(sent[1], spanContext.traceId);
      assert.equal((await auditOf(server, runId, "call_traced")).traceId, spanContext.traceId);
    });

    test("with no active span, no traceparent is sent and the server starts a fresh trace", { timeout: 30_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      const rec = recordingFetch();
      const { tools } = await draftlineTools({ baseUrl: server.url, token: buyer, runId, fetch: rec.fetch });
      const toolCallId = `call_${randomUUID()}`;
      assert.equal(trace.getActiveSpan(), undefined);
      assertStock(await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(toolCallId)));
      assert.equal(rec.sent.length, 1);
      assert.equal(rec.sent[0]?.get("traceparent"), null);
      assert.equal(rec.sent[0]?.get("tracestate"), null);
      assert.ok(testTraceIds.size >= 3, "the traced tests ran first");
      assertFreshTrace((await auditOf(server, runId, toolCallId)).traceId);
    });

    test("traceContext replaces the active span context; returning undefined sends none", { timeout: 30_000 }, async () => {
      const runId = `run-${randomUUID()}`;
      const rec = recordingFetch();
      const explicit = { traceId: hexId(16), spanId: hexId(8) };
      /** @type {Array<{ toolName: string, toolCallId: string }>} */
      const asked = [];
      let send = true;
      const { tools } = await draftlineTools({
        baseUrl: server.url,
        token: buyer,
        runId,
        fetch: rec.fetch,
        traceContext: (call) => {
          asked.push(call);
          return send ? { traceparent: `00-${explicit.traceId}-${explicit.spanId}-01`, tracestate: "" } : undefined;
        },
      });
      const [first, second] = [`call_${randomUUID()}`, `call_${randomUUID()}`];
      const spanTraceId = await tracer().startActiveSpan("ignored span", async (span) => {
        try {
          assertStock(await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(first)));
          send = false;
          assertStock(await tools[STOCK]?.execute?.({ item_code: "BRG-0042" }, callOptions(second)));
          return span.spanContext().traceId;
        } finally {
          span.end();
        }
      });
      testTraceIds.add(spanTraceId).add(explicit.traceId);
      assert.deepEqual(asked, [
        { toolName: STOCK, toolCallId: first },
        { toolName: STOCK, toolCallId: second },
      ]);
      assert.equal(rec.sent.length, 2);
      assert.equal(rec.sent[0]?.get("traceparent"), `00-${explicit.traceId}-${explicit.spanId}-01`);
      assert.equal(rec.sent[0]?.get("tracestate"), null, "an empty tracestate is not sent");
      assert.equal(rec.sent[1]?.get("traceparent"), null);
      assert.equal((await auditOf(server, runId, first)).traceId, explicit.traceId);
      assertFreshTrace((await auditOf(server, runId, second)).traceId);
    });
  });
});
