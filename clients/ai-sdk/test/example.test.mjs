// @ts-check
// The README's runnable example runs as documented against a local server: the read tool
// runs, the draft waits for approval, and then runs (APPROVE=yes) or never reaches the
// server (APPROVE=no).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { startDraftline } from "./support/draftline-server.mjs";

/** @type {import("./support/draftline-server.mjs").DraftlineServer} */
let server;
before(async () => {
  server = await startDraftline();
});
after(async () => {
  await server?.stop();
});

/**
 * Runs examples/agent.mjs with this Node (the suite runs on Node 22).
 * @param {Record<string, string>} extraEnv
 * @returns {Promise<string>} its stdout
 */
async function runExample(extraEnv) {
  const script = fileURLToPath(new URL("../examples/agent.mjs", import.meta.url));
  const env = { ...process.env, DRAFTLINE_URL: server.url, DRAFTLINE_TOKEN: await server.token("buyer-sby"), ...extraEnv };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script], { env, timeout: 45_000 }, (err, out, errOut) =>
      err ? reject(new Error(`${err.message}\n${out}\n${errOut}`)) : resolve(out),
    );
  });
}

test("examples/agent.mjs: the draft waits for approval, then is created", { timeout: 60_000 }, async () => {
  const stdout = await runExample({ APPROVE: "yes" });
  assert.match(stdout, /^inventory_get_stock \(call_1\) → \{"item_code":"BRG-0042"/m);
  // The examiner before the draft: buyer-sby holds agent:read, and the demo policy is in force.
  assert.match(stdout, /^agent_get_limits \(call_limits\) → \{.*"mode":"enforce"/m);
  assert.match(stdout, /^approval requested: purchasing_create_po_draft \(call_2\): purchasing_create_po_draft .* writes to the ERP/m);
  assert.match(stdout, /^approved: Approved by Budi/m);
  assert.match(stdout, /^purchasing_create_po_draft \(call_2\) → \{"draft_id":"po_\w+","po_number":"PO-SBY-\d+","status":"draft"/m);
  assert.match(stdout, /^Done: the draft awaits review\.$/m);
  // The order the story happens in.
  const at = (/** @type {RegExp} */ re) => stdout.search(re);
  assert.ok(at(/^inventory_get_stock/m) < at(/^approval requested/m));
  assert.ok(at(/^agent_get_limits/m) < at(/^approval requested/m));
  assert.ok(at(/^approval requested/m) < at(/^purchasing_create_po_draft \(call_2\) → \{/m));
});

test("examples/agent.mjs with APPROVE=no: the denied draft is never run", { timeout: 60_000 }, async () => {
  const stdout = await runExample({ APPROVE: "no" });
  assert.match(stdout, /^inventory_get_stock \(call_1\) → \{"item_code":"BRG-0042"/m);
  assert.match(stdout, /^denied: Denied by Budi/m);
  assert.match(stdout, /^purchasing_create_po_draft \(call_2\) → denied, not run \(Denied by Budi: wait for the stock count\)$/m);
  assert.doesNotMatch(stdout, /"draft_id"/);
  assert.match(stdout, /^Understood: no draft was created\.$/m);
});
