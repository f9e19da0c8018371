// @ts-check
// Runnable example: an AI SDK 7 agent loop over a draftline deployment's tools, with the
// approval step a draft tool asks for. The model is the AI SDK's MockLanguageModelV4,
// scripted, so no API key is needed; swap in a real one (e.g. `openai("gpt-5")` from
// @ai-sdk/openai) for a real agent.
//
//   draftline serve --port 3000 &
//   export DRAFTLINE_URL=http://127.0.0.1:3000
//   export DRAFTLINE_TOKEN=$(draftline token --user buyer-sby --resource $DRAFTLINE_URL)
//   node examples/agent.mjs            # the "person" approves the draft
//   APPROVE=no node examples/agent.mjs # the "person" denies it: nothing reaches the ERP
import { randomUUID } from "node:crypto";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { draftlineTools } from "@draftline/ai-sdk";

const baseUrl = process.env.DRAFTLINE_URL ?? "http://127.0.0.1:3000";
const token = process.env.DRAFTLINE_TOKEN;
if (!token) throw new Error("set DRAFTLINE_TOKEN (draftline token --user buyer-sby --resource $DRAFTLINE_URL)");
const approve = (process.env.APPROVE ?? "yes") !== "no";

const runId = `run-${randomUUID()}`; // one per agent run: it keys the run's drafts
const { tools, toolApproval } = await draftlineTools({
  baseUrl,
  token,
  runId,
  model: "mock-model-id",
  promptVersion: "example-v1",
  // The defaults: read tools never ask, draft tools ask a person. Overrides, e.g.:
  // approval: { tools: { purchasing_create_po_draft: { type: "approved", reason: "policy P-7" } } },
});
console.log(`run ${runId}; tools: ${Object.keys(tools).join(", ")}`);

const neededBy = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};
/** @type {import("@ai-sdk/provider").LanguageModelV4GenerateResult[]} */
const script = [
  {
    // Before any draft, the stock and what the tenant's policy still leaves this run and
    // person (agent_get_limits, scope agent:read): an agent that knows its limits splits
    // or stops instead of being refused.
    content: [
      { type: "tool-call", toolCallId: "call_1", toolName: "inventory_get_stock", input: JSON.stringify({ item_code: "BRG-0042" }) },
      { type: "tool-call", toolCallId: "call_limits", toolName: "agent_get_limits", input: JSON.stringify({}) },
    ],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  },
  {
    content: [
      {
        type: "tool-call",
        toolCallId: "call_2",
        toolName: "purchasing_create_po_draft",
        input: JSON.stringify({
          vendor_code: "V-00231",
          needed_by: neededBy,
          client_ref: `example-${runId}`,
          note: null,
          lines: [{ item_code: "BRG-0042", qty: 2, uom: "BOX" }],
        }),
      },
    ],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  },
  {
    content: [{ type: "text", text: approve ? "Done: the draft awaits review." : "Understood: no draft was created." }],
    finishReason: { unified: "stop", raw: undefined },
    usage,
    warnings: [],
  },
];
const model = new MockLanguageModelV4({ doGenerate: script });

/** @type {import("ai").ModelMessage[]} */
const messages = [
  {
    role: "user",
    content: "BRG-0042 is low in Surabaya. Check its stock and what you may still draft, then draft a purchase order from V-00231.",
  },
];

// 1. The loop runs the read tools (the stock, the limits), then stops at the draft: it
//    waits for a person.
const first = await generateText({ model, tools, toolApproval, stopWhen: isStepCount(5), messages });
printToolResults(first);
messages.push(...first.responseMessages);

/** @type {import("ai").ToolApprovalResponse[]} */
const decisions = [];
for (const part of first.content) {
  if (part.type !== "tool-approval-request" || part.isAutomatic) continue;
  console.log(`approval requested: ${part.toolCall.toolName} (${part.toolCall.toolCallId}): ${part.reason ?? ""}`);
  // A real app shows the request (tool, input, reason) to a person and waits for the answer.
  const reason = approve ? "Approved by Budi (purchasing lead): stock below reorder point" : "Denied by Budi: wait for the stock count";
  console.log(`${approve ? "approved" : "denied"}: ${reason}`);
  decisions.push({ type: "tool-approval-response", approvalId: part.approvalId, approved: approve, reason });
}
messages.push({ role: "tool", content: decisions });

// 2. The same loop resumes: an approved draft runs (its reason goes to the audit item as
//    approval_reason); a denied one never reaches the ERP and the model is told so.
const second = await generateText({ model, tools, toolApproval, stopWhen: isStepCount(5), messages });
printToolResults(second);
console.log(second.text);

/**
 * Prints each tool result of a generateText call. They are read from `responseMessages`,
 * which (unlike `toolResults`) also holds the results of the approved calls the SDK runs
 * before the first model step of a resumed call, and the denials.
 * @param {{ responseMessages: import("ai").ModelMessage[] }} result
 */
function printToolResults(result) {
  for (const message of result.responseMessages) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type !== "tool-result") continue;
      const o = part.output;
      const out =
        o.type === "execution-denied"
          ? `denied, not run (${o.reason ?? "no reason"})`
          : o.type === "text" || o.type === "error-text"
            ? o.value
            : JSON.stringify("value" in o ? o.value : o);
      console.log(`${part.toolName} (${part.toolCallId}) → ${out.slice(0, 160)}${out.length > 160 ? "…" : ""}`);
    }
  }
}
