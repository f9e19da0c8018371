// @ts-check
// Helpers for calling a tool's execute function directly, the way the AI SDK does.

/**
 * Execution options for a direct `execute` call that no approval was needed or given for.
 * @param {string} toolCallId
 * @returns {import("ai").ToolExecutionOptions<undefined>}
 */
export function callOptions(toolCallId) {
  return { toolCallId, messages: [], context: undefined };
}

/**
 * Execution options for a direct `execute` call that a person approved: the message
 * history the AI SDK hands a tool it resumes after an approval (the assistant's tool call
 * and `tool-approval-request`, then the `tool-approval-response`).
 * @param {{ toolName: string, toolCallId: string, input: unknown, reason?: string, approved?: boolean }} call
 * @returns {import("ai").ToolExecutionOptions<undefined>}
 */
export function approvedCallOptions({ toolName, toolCallId, input, reason, approved = true }) {
  const approvalId = `approval-${toolCallId}`;
  return {
    toolCallId,
    context: undefined,
    messages: [
      { role: "user", content: "Draft it." },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId, toolName, input },
          { type: "tool-approval-request", approvalId, toolCallId },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-approval-response", approvalId, approved, ...(reason === undefined ? {} : { reason }) },
        ],
      },
    ],
  };
}
