// @ts-check
// Webhooks, checked by an independent implementation: a real `draftline serve` (its
// sweeper every 50 ms, loopback endpoints allowed) sends the demo tenant's events to
// an HTTP server here, set with the real `draftline notify set`, and each delivery is
// verified with the `standardwebhooks` npm package (the specification's reference
// JavaScript library), not with draftline's own signing code.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DraftlineWebhookError, draftlineTools, verifyDraftlineWebhook } from "@draftline/ai-sdk";
import { Webhook } from "standardwebhooks";
import { approvedCallOptions } from "./support/approval.mjs";
import { draftlineBin, isoDate, startDraftline } from "./support/draftline-server.mjs";

const DRAFT = "purchasing_create_po_draft";

/**
 * Runs the `draftline` CLI against the server's table.
 * @param {import("./support/draftline-server.mjs").DraftlineServer} server
 * @param {string[]} args
 * @param {Record<string, string>} [env]
 * @returns {Promise<string>} what it printed
 */
function cli(server, args, env = {}) {
  const dynamo = server.dynamodb;
  assert.ok(dynamo, "draftline serve printed its DynamoDB endpoint");
  return new Promise((resolve, reject) => {
    execFile(
      draftlineBin(),
      args,
      {
        timeout: 30_000,
        env: { ...process.env, DRAFTLINE_DYNAMODB_ENDPOINT: dynamo.endpoint, DRAFTLINE_TABLE: dynamo.table, ...env },
      },
      (err, stdout, stderr) => (err ? reject(new Error(`${args.join(" ")}: ${err.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

/**
 * An endpoint on 127.0.0.1 that keeps each request's headers and raw body.
 * @returns {Promise<{ url: string, received: { headers: Record<string, string>, body: string }[], close: () => void }>}
 */
async function endpoint() {
  /** @type {{ headers: Record<string, string>, body: string }[]} */
  const received = [];
  const server = createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const headers = /** @type {Record<string, string>} */ (
        Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
      );
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { url: `http://127.0.0.1:${address.port}/hooks`, received, close: () => server.close() };
}

/**
 * Waits (at most 15 s) until `list` holds `n` entries.
 * @param {unknown[]} list
 * @param {number} n
 */
async function waitFor(list, n) {
  for (let i = 0; i < 150 && list.length < n; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(list.length, n, `received ${list.length}, expected ${n}`);
}

describe("webhooks verified by the standardwebhooks library", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  /** @type {Awaited<ReturnType<typeof endpoint>>} */
  let hooks;
  /** @type {string} */
  let secret;
  before(async () => {
    server = await startDraftline({
      erp: "builtin",
      env: { DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK: "true", DRAFTLINE_SWEEP_MILLISECONDS: "50" },
    });
    hooks = await endpoint();
    secret = (await cli(server, ["notify", "secret"])).trim();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const dir = await mkdtemp(join(tmpdir(), "draftline-notify-"));
    const file = join(dir, "hooks.json");
    await writeFile(
      file,
      JSON.stringify({
        version: null,
        endpoints: [{ id: "orchestrator", url: hooks.url, events: ["draft.created"], secrets: [secret] }],
      }),
    );
    try {
      const printed = await cli(server, ["notify", "set", file, "--tenant", "demo", "--by", "ai-sdk-tests"], {
        DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK: "true",
      });
      assert.match(printed, /notification settings version \d+ in force/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    hooks?.close();
    await server?.stop();
  });

  test("a fresh draft is one draft.created webhook that the library verifies", { timeout: 60_000 }, async () => {
    const runId = `run-hooks-${randomUUID()}`;
    const { tools } = await draftlineTools({ baseUrl: server.url, token: await server.token("buyer-sby"), runId });
    const draft = tools[DRAFT];
    assert.ok(draft?.execute);
    const input = {
      vendor_code: "V-00231",
      needed_by: isoDate(14),
      client_ref: `hooks-${runId}`,
      note: "never in a webhook",
      lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
    };
    const po = /** @type {any} */ (
      await draft.execute(input, approvedCallOptions({ toolName: DRAFT, toolCallId: "call_hook", input, reason: "ok" }))
    );
    assert.match(po?.po_number ?? "", /^PO-SBY-\d+$/, JSON.stringify(po));

    await waitFor(hooks.received, 1);
    const [delivery] = hooks.received;
    const event = /** @type {any} */ (new Webhook(secret).verify(delivery.body, delivery.headers));
    assert.equal(event.type, "draft.created");
    assert.equal(event.data.document.number, po.po_number);
    assert.equal(event.data.run_id, runId);
    assert.equal(event.data.tool_call_id, "call_hook");
    assert.match(delivery.headers["webhook-id"], /^evt_[0-9a-z]{26}$/);
    assert.doesNotMatch(delivery.body, /never in a webhook/, "no note in a payload");

    // A forged body, or another secret, does not verify.
    assert.throws(() => new Webhook(secret).verify(delivery.body.replace("draft.created", "draft.decided"), delivery.headers));
    const other = (await cli(server, ["notify", "secret"])).trim();
    assert.throws(() => new Webhook(other).verify(delivery.body, delivery.headers));

    // Swept many times since: still the one delivery.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(hooks.received.length, 1);

    // The package's own verifier agrees with the library, and types the event.
    const typed = await verifyDraftlineWebhook(secret, delivery.body, delivery.headers);
    assert.equal(typed.id, delivery.headers["webhook-id"]);
    assert.equal(typed.type, "draft.created");
    assert.deepEqual({ type: typed.type, timestamp: typed.timestamp, data: typed.data }, {
      type: event.type,
      timestamp: event.timestamp,
      data: { ...event.data, total: event.data.total },
    });
    // Either secret of a rotation verifies; a forged body, another secret alone,
    // or a stale timestamp does not.
    assert.equal((await verifyDraftlineWebhook([other, secret], delivery.body, delivery.headers)).id, typed.id);
    await assert.rejects(verifyDraftlineWebhook(other, delivery.body, delivery.headers), DraftlineWebhookError);
    await assert.rejects(
      verifyDraftlineWebhook(secret, delivery.body.replace(po.po_number, "PO-SBY-999999"), delivery.headers),
      DraftlineWebhookError,
    );
    await assert.rejects(
      verifyDraftlineWebhook(secret, delivery.body, delivery.headers, { now: new Date(Date.now() + 10 * 60_000) }),
      /too old or too new/,
    );
  });

  test("a decision the library signs is read as a typed draft.decided event", async () => {
    const body = JSON.stringify({
      type: "draft.decided",
      timestamp: new Date().toISOString(),
      data: {
        tenant: "demo",
        branch: "SBY-01",
        document: { id: "po_1", number: "PO-SBY-000004", kind: "purchase_order" },
        run_id: "run-42",
        tool_call_id: null,
        total: { amount: "2880000.00", currency: "IDR" },
        decision: { verdict: "rejected", decided_by: "approver-sby", reason: "Order BOX, not PCS" },
        review_url: "https://draftline.example.com/review/documents/PO-SBY-000004",
      },
    });
    const id = "evt_01jxample0000000000000000";
    const now = new Date();
    const signature = new Webhook(secret).sign(id, now, body);
    const headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signature };
    const event = await verifyDraftlineWebhook(secret, body, headers);
    assert.equal(event.type, "draft.decided");
    if (event.type !== "draft.decided") return;
    assert.deepEqual(event.data.decision, { verdict: "rejected", decided_by: "approver-sby", reason: "Order BOX, not PCS" });
    assert.equal(event.data.run_id, "run-42");
    const wrong = body.replace('"rejected"', '"maybe"');
    const resigned = { ...headers, "webhook-signature": new Webhook(secret).sign(id, now, wrong) };
    await assert.rejects(verifyDraftlineWebhook(secret, wrong, resigned), /data.decision.verdict/);
  });
});
