// Compile-only (npm run typecheck:test): what a TypeScript consumer writes with AI SDK 7
// type-checks against the published declarations. Never run.
import { generateText, isStepCount, streamText, tool, ToolLoopAgent, jsonSchema, type LanguageModel } from "ai";
import { draftlineTools, type DraftlineApprovalRule, type DraftlineTraceContext, type DraftlineToolSet } from "@draftline/ai-sdk";

declare const model: LanguageModel;

export async function consumer(): Promise<void> {
  const onlyOneLine: DraftlineApprovalRule = (input, { toolCallId, messages }) =>
    (input as { lines: unknown[] }).lines.length === 1 && toolCallId !== "" && messages.length >= 0
      ? { type: "approved", reason: "one line" }
      : "user-approval";
  const set: DraftlineToolSet = await draftlineTools({
    baseUrl: "https://erp-tools.example.com",
    token: async () => "jwt",
    runId: "run-1",
    approval: { tiers: { read: "not-applicable", draft: "user-approval" }, tools: { purchasing_create_po_draft: onlyOneLine } },
  });
  // A trace context of the application's own, in place of the active OpenTelemetry span's.
  const traced = (): DraftlineTraceContext | undefined => ({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
  await draftlineTools({ baseUrl: "https://erp-tools.example.com", token: "jwt", runId: "run-2", traceContext: ({ toolName, toolCallId }) => (toolName && toolCallId ? traced() : undefined) });
  const { tools, toolApproval } = set;

  await generateText({ model, tools, toolApproval, prompt: "p", stopWhen: isStepCount(5) });
  const streamed = streamText({ model, tools, toolApproval, prompt: "p" });
  await streamed.content;
  await new ToolLoopAgent({ model, tools, toolApproval }).generate({ prompt: "p" });

  // Mixed with the application's own tools and rules.
  const notify = tool({
    inputSchema: jsonSchema<{ to: string }>({ type: "object", properties: { to: { type: "string" } }, required: ["to"] }),
    execute: async ({ to }) => `sent to ${to}`,
  });
  await generateText({
    model,
    tools: { ...tools, notify },
    toolApproval: { ...toolApproval, notify: "user-approval" },
    prompt: "p",
  });
}
