// @ts-check
// A tenant's limits through @draftline/ai-sdk: the policy is set with the real
// `draftline policy set` against the server's own table, and a refusal reaches the
// model as LIMIT_REACHED text it can act on (what did not happen, what to do), for a
// run's budget (not retryable) and for a per-minute rate (retryable, with the wait).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { draftlineTools } from "@draftline/ai-sdk";
import { approvedCallOptions, callOptions } from "./support/approval.mjs";
import { auditRows } from "./support/audit.mjs";
import { draftlineBin, isoDate, startDraftline } from "./support/draftline-server.mjs";

const DRAFT = "purchasing_create_po_draft";
const READ = "inventory_get_stock";

/**
 * One BOX of BRG-0042 from V-00231 under `clientRef`.
 * @param {string} clientRef
 */
const order = (clientRef) => ({
  vendor_code: "V-00231",
  needed_by: isoDate(14),
  client_ref: clientRef,
  note: null,
  lines: [{ item_code: "BRG-0042", qty: 1, uom: "BOX" }],
});

/**
 * Sets the demo tenant's policy with `draftline policy set FILE` against the server's table.
 * @param {import("./support/draftline-server.mjs").DraftlineServer} server
 * @param {unknown} policy
 * @returns {Promise<string>} what the command printed
 */
async function setPolicy(server, policy) {
  const dynamo = server.dynamodb;
  assert.ok(dynamo, "draftline serve printed its DynamoDB endpoint");
  const dir = await mkdtemp(join(tmpdir(), "draftline-policy-"));
  const file = join(dir, "policy.json");
  await writeFile(file, JSON.stringify(policy));
  try {
    return await new Promise((resolve, reject) => {
      execFile(
        draftlineBin(),
        ["policy", "set", file, "--tenant", "demo", "--by", "ai-sdk-tests"],
        {
          timeout: 30_000,
          env: { ...process.env, DRAFTLINE_DYNAMODB_ENDPOINT: dynamo.endpoint, DRAFTLINE_TABLE: dynamo.table },
        },
        (err, stdout, stderr) => (err ? reject(new Error(`policy set failed: ${err.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("limits of the tenant's policy", () => {
  /** @type {import("./support/draftline-server.mjs").DraftlineServer} */
  let server;
  before(async () => {
    server = await startDraftline();
    // Before the first call: no instance holds the tenant's policy yet.
    await setPolicy(server, {
      version: null,
      mode: "enforce",
      time_zone: "+07:00",
      limits: {
        per_run: { max_drafts: 1, max_value: null },
        per_tool_per_person: { calls_per_minute: 3 },
        near_duplicate_hours: 0,
      },
      branches: null,
    });
  });
  after(async () => {
    await server?.stop();
  });

  test("a run's draft limit reaches the model as LIMIT_REACHED, not retryable", { timeout: 60_000 }, async () => {
    const runId = `run-limits-${randomUUID()}`;
    const { tools } = await draftlineTools({ baseUrl: server.url, token: await server.token("buyer-sby"), runId });
    const draft = tools[DRAFT];
    assert.ok(draft?.execute);
    const first = order("limit-1");
    const po = /** @type {any} */ (
      await draft.execute(first, approvedCallOptions({ toolName: DRAFT, toolCallId: "call_first", input: first, reason: "ok" }))
    );
    assert.match(po?.po_number ?? "", /^PO-SBY-\d+$/, JSON.stringify(po));

    const second = order("limit-2");
    const refused = String(
      await draft.execute(second, approvedCallOptions({ toolName: DRAFT, toolCallId: "call_second", input: second, reason: "ok" })),
    );
    assert.match(refused, /^Error LIMIT_REACHED \(not retryable\): /);
    assert.match(refused, new RegExp(`Agent run '${runId}' has reached its limit of 1 draft`));
    assert.match(refused, /No draft was created/);
    assert.match(refused, /ask them to draft the rest or to raise the limit/);
    assert.doesNotMatch(refused, /Retry after/);

    // The same run replays its created draft: a replay never counts.
    const again = /** @type {any} */ (
      await draft.execute(first, approvedCallOptions({ toolName: DRAFT, toolCallId: "call_again", input: first, reason: "ok" }))
    );
    assert.equal(again?.po_number, po.po_number);

    const rows = await auditRows(server, runId);
    const byCall = Object.fromEntries(rows.map((r) => [r.toolCallId, r]));
    assert.equal(byCall.call_first?.outcome, "ok");
    assert.equal(byCall.call_second?.outcome, "tool_error", JSON.stringify(rows));
  });

  test("a per-minute rate reaches the model as LIMIT_REACHED, retryable, with the wait", { timeout: 60_000 }, async () => {
    const runId = `run-rate-${randomUUID()}`;
    const { tools } = await draftlineTools({ baseUrl: server.url, token: await server.token("buyer-jkt"), runId });
    const read = tools[READ];
    assert.ok(read?.execute);
    // Seven calls within seconds span at most two minutes, so one minute holds four.
    /** @type {string | undefined} */
    let limited;
    for (let i = 0; i < 7 && !limited; i++) {
      /** @type {unknown} */
      const answer = await read.execute({ item_code: "BRG-0042" }, callOptions(`call_read_${i}`));
      if (typeof answer === "string") limited = answer;
      else assert.equal(/** @type {any} */ (answer)?.item_code, "BRG-0042", JSON.stringify(answer));
    }
    assert.ok(limited, "the fourth call of a minute is refused");
    assert.match(limited, /^Error LIMIT_REACHED \(retryable\): You have called inventory_get_stock 3 times this minute/);
    assert.match(limited, /Nothing was read or written/);
    assert.match(limited, /\nRetry after \d+ seconds\./);
  });
});
