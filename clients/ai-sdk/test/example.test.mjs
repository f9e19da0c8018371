// @ts-check
// The README's runnable example runs as documented against a local server.
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

test("examples/agent.mjs drafts a PO through the AI SDK", { timeout: 60_000 }, async () => {
  const script = fileURLToPath(new URL("../examples/agent.mjs", import.meta.url));
  const env = { ...process.env, DRAFTLINE_URL: server.url, DRAFTLINE_TOKEN: await server.token("buyer-sby") };
  const stdout = await new Promise((resolve, reject) => {
    execFile(process.execPath, [script], { env, timeout: 45_000 }, (err, out, errOut) =>
      err ? reject(new Error(`${err.message}\n${out}\n${errOut}`)) : resolve(out),
    );
  });
  assert.match(stdout, /^inventory_get_stock \(call_1\) → \{"item_code":"BRG-0042"/m);
  assert.match(stdout, /^purchasing_create_po_draft \(call_2\) → \{"draft_id":"po_\w+","po_number":"PO-SBY-\d+","status":"draft"/m);
  assert.match(stdout, /^Done: the draft awaits review\.$/m);
});
