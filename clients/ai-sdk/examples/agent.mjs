// @ts-check
// Runnable example: an AI SDK agent loop over a draftline deployment's tools.
// The model is the AI SDK's MockLanguageModelV3, scripted, so no API key is needed;
// swap in a real one (e.g. `openai("gpt-5")` from @ai-sdk/openai) for a real agent.
//
//   draftline serve --port 3000 &
//   export DRAFTLINE_URL=http://127.0.0.1:3000
//   export DRAFTLINE_TOKEN=$(draftline token --user buyer-sby --resource $DRAFTLINE_URL)
//   node examples/agent.mjs
import { randomUUID } from "node:crypto";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { draftlineTools } from "@draftline/ai-sdk";

const baseUrl = process.env.DRAFTLINE_URL ?? "http://127.0.0.1:3000";
const token = process.env.DRAFTLINE_TOKEN;
if (!token) throw new Error("set DRAFTLINE_TOKEN (draftline token --user buyer-sby --resource $DRAFTLINE_URL)");

const runId = `run-${randomUUID()}`; // one per agent run: it keys the run's drafts
const tools = await draftlineTools({ baseUrl, token, runId, model: "mock-model-id", promptVersion: "example-v1" });
console.log(`run ${runId}; tools: ${Object.keys(tools).join(", ")}`);

const neededBy = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};
/** @type {import("@ai-sdk/provider").LanguageModelV3GenerateResult[]} */
const script = [
  {
    content: [{ type: "tool-call", toolCallId: "call_1", toolName: "inventory_get_stock", input: JSON.stringify({ item_code: "BRG-0042" }) }],
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
    content: [{ type: "text", text: "Done: the draft awaits review." }],
    finishReason: { unified: "stop", raw: undefined },
    usage,
    warnings: [],
  },
];
const model = new MockLanguageModelV3({ doGenerate: script });

const result = await generateText({
  model,
  tools,
  stopWhen: stepCountIs(5),
  prompt: "BRG-0042 is low in Surabaya. Check its stock and draft a purchase order from V-00231.",
});
for (const step of result.steps) {
  for (const r of step.toolResults) {
    const out = typeof r.output === "string" ? r.output : JSON.stringify(r.output);
    console.log(`${r.toolName} (${r.toolCallId}) → ${out.slice(0, 160)}${out.length > 160 ? "…" : ""}`);
  }
}
console.log(result.text);
