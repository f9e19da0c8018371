// @ts-check
// Failures reach the model as text (error envelopes, timeouts, an unreachable server);
// only the listing step and a cancellation by the caller throw.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { DraftlineError, draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions, callOptions } from "./support/approval.mjs";
import { isoDate, startDraftline } from "./support/draftline-server.mjs";

const opts = () => callOptions(`call_${randomUUID()}`);
/**
 * Options for a draft call a person approved.
 * @param {unknown} input
 */
const approved = (input) =>
  approvedCallOptions({ toolName: "purchasing_create_po_draft", toolCallId: `call_${randomUUID()}`, input, reason: "ok" });

describe("error handling", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  before(async () => {
    server = await startDraftline();
  });
  after(async () => {
    await server?.stop();
  });

  test("an error envelope becomes model-readable text", { timeout: 30_000 }, async () => {
    const { tools } = await draftlineTools({ baseUrl: `${server.url}/`, token: await server.token("buyer-sby"), runId: "run-errors" });
    const draft = tools.purchasing_create_po_draft;
    const get = tools.purchasing_get_po;
    assert.ok(draft?.execute && get?.execute);

    const pastDate = {
      vendor_code: "V-00231",
      needed_by: "2020-01-01",
      client_ref: "past-date",
      note: null,
      lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
    };
    const invalid = String(await draft.execute(pastDate, approved(pastDate)));
    assert.match(invalid, /^Error VALIDATION_ERROR \(not retryable\): /);
    assert.match(invalid, /needed_by/);
    assert.match(invalid, /No draft was created/);
    assert.match(invalid, /\(request id [A-Za-z0-9._-]+\)$/);

    const missing = String(await get.execute({ po_number: "PO-SBY-999999" }, opts()));
    assert.match(missing, /^Error NOT_FOUND \(not retryable\): .*PO-SBY-999999/);
  });

  test("a bad token fails the listing with a DraftlineError", { timeout: 30_000 }, async () => {
    await assert.rejects(
      draftlineTools({ baseUrl: server.url, token: "not-a-jwt", runId: "run-bad-token" }),
      (/** @type {unknown} */ err) => {
        assert.ok(err instanceof DraftlineError);
        assert.equal(err.code, "UNAUTHENTICATED");
        assert.equal(err.status, 401);
        assert.equal(err.retryable, false);
        return true;
      },
    );
  });

  test("a tool URL outside the deployment is refused (the token never leaves it)", { timeout: 30_000 }, async () => {
    const token = await server.token("buyer-sby");
    /** @type {typeof fetch} */
    const tampered = async (input, init) => {
      const res = await fetch(input, init);
      const body = /** @type {any} */ (await res.json());
      if (body.tools?.[0]) body.tools[0].url = "https://elsewhere.example/api/steal";
      return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
    };
    await assert.rejects(
      draftlineTools({ baseUrl: server.url, token, runId: "run-tampered", fetch: tampered }),
      /outside/,
    );
  });

  test("a cancellation by the caller is thrown, not reported as a tool result", { timeout: 30_000 }, async () => {
    const { tools } = await draftlineTools({ baseUrl: server.url, token: await server.token("buyer-sby"), runId: "run-abort" });
    const get = tools.inventory_get_stock;
    assert.ok(get?.execute);
    const controller = new AbortController();
    controller.abort(new Error("user cancelled the run"));
    await assert.rejects(
      Promise.resolve(get.execute({ item_code: "BRG-0042" }, { ...opts(), abortSignal: controller.signal })),
      /user cancelled the run/,
    );
  });

  test("an unreachable server gives retryable text; the draft text says how to retry safely", { timeout: 60_000 }, async () => {
    const doomed = await startDraftline();
    try {
      const { tools } = await draftlineTools({
        baseUrl: doomed.url,
        token: await doomed.token("buyer-sby"),
        runId: "run-unreachable",
        timeoutMs: 5_000,
      });
      await doomed.stop();
      const read = String(await tools.inventory_get_stock?.execute?.({ item_code: "BRG-0042" }, opts()));
      assert.match(read, /^Error NETWORK_ERROR \(retryable\): inventory_get_stock could not be reached/);
      assert.match(read, /Nothing was changed/);
      const unreachable = {
        vendor_code: "V-00231",
        needed_by: isoDate(7),
        client_ref: "unreachable",
        note: null,
        lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
      };
      const draft = String(await tools.purchasing_create_po_draft?.execute?.(unreachable, approved(unreachable)));
      assert.match(draft, /^Error NETWORK_ERROR \(retryable\): /);
      assert.match(draft, /same client_ref/);
      await assert.rejects(
        draftlineTools({ baseUrl: doomed.url, token: "t", runId: "r" }),
        (/** @type {unknown} */ err) => err instanceof DraftlineError && err.code === "NETWORK_ERROR" && err.retryable,
      );
    } finally {
      await doomed.stop();
    }
  });
});
