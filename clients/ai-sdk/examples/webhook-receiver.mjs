// @ts-check
// Runnable example: an orchestrator's webhook endpoint. It verifies each delivery of
// draftline's webhooks with the secret from `draftline notify set`, and when a person
// decides a draft an agent run made, it resumes that run (here: prints what the run
// would do next). Deduplicate on the event id: a delivery may come more than once.
//
//   export WEBHOOK_SECRET=$(draftline notify secret)
//   node examples/webhook-receiver.mjs          # listens on 127.0.0.1:9000
//   # hooks.json: {"version": null, "endpoints": [{"id": "orchestrator",
//   #   "url": "http://127.0.0.1:9000/hooks", "events": ["draft.created", "draft.decided"],
//   #   "secrets": ["<WEBHOOK_SECRET>"]}]}
//   DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK=true draftline notify set hooks.json
import { createServer } from "node:http";
import { DraftlineWebhookError, verifyDraftlineWebhook } from "@draftline/ai-sdk";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error("set WEBHOOK_SECRET (draftline notify secret)");
const port = Number(process.env.PORT ?? 9000);

/** Event ids already handled (a real orchestrator keeps them with its runs). */
const handled = new Set();

createServer((request, response) => {
  /** @type {Buffer[]} */
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", async () => {
    const headers = /** @type {Record<string, string>} */ (
      Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]))
    );
    try {
      const event = await verifyDraftlineWebhook(secret, Buffer.concat(chunks).toString("utf8"), headers);
      response.writeHead(204).end();
      if (handled.has(event.id)) return;
      handled.add(event.id);
      if (event.type === "draft.decided") {
        const { decision, document, run_id } = event.data;
        console.log(
          `run ${run_id ?? "(none)"}: ${document.number} was ${decision.verdict} by ${decision.decided_by}` +
            (decision.reason ? ` ("${decision.reason}")` : "") +
            (decision.verdict === "approved" ? ": resume the run" : ": tell the model why, and let it revise"),
        );
      } else {
        console.log(`run ${event.data.run_id ?? "(none)"}: ${event.data.document.number} waits for a person`);
      }
    } catch (err) {
      // Forged, replayed or not draftline's: refuse it (draftline retries a 4xx too).
      response.writeHead(err instanceof DraftlineWebhookError ? 401 : 500).end();
    }
  });
}).listen(port, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${port}/hooks`));
