// @ts-check
// Reading the audit items a run left in the server's embedded DynamoDB engine (they are
// not visible over HTTP): one item per tool call, under the partition key T#<tenant>#RUN#<run id>.
import assert from "node:assert/strict";
import { DynamoDBClient, QueryCommand } from "@aws-sdk/client-dynamodb";

/**
 * @typedef {object} AuditRow   the attributes of one audit item the tests look at
 * @property {string | undefined} tool
 * @property {string | undefined} toolCallId
 * @property {string | undefined} outcome
 * @property {string | undefined} run
 * @property {string | undefined} model
 * @property {string | undefined} prompt
 * @property {string | undefined} onBehalfOf
 * @property {string | undefined} tenant
 * @property {string | undefined} branch
 * @property {string | undefined} document
 * @property {string | undefined} approval         "approved" | "not-required"
 * @property {string | undefined} approvalReason   the decoded X-Tool-Approval-Reason
 * @property {string | undefined} traceId          the trace the call belongs to (32 hex digits)
 */

/**
 * Every audit item of one agent run of the demo tenant.
 * @param {import("./draftline-server.mjs").DraftlineServer} server
 * @param {string} runId
 * @returns {Promise<AuditRow[]>}
 */
export async function auditRows(server, runId) {
  const dynamo = server.dynamodb;
  assert.ok(dynamo, "draftline serve printed its DynamoDB endpoint");
  const ddb = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  try {
    const audit = await ddb.send(
      new QueryCommand({
        TableName: dynamo.table,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: `T#demo#RUN#${runId}` } },
      }),
    );
    return (audit.Items ?? []).map((i) => ({
      tool: i.tool?.S,
      toolCallId: i.tool_call_id?.S,
      outcome: i.outcome?.S,
      run: i.agent_run_id?.S,
      model: i.model?.S,
      prompt: i.prompt_version?.S,
      onBehalfOf: i.on_behalf_of?.S,
      tenant: i.tenant_id?.S,
      branch: i.branch_id?.S,
      document: i.document_number?.S,
      approval: i.approval?.S,
      approvalReason: i.approval_reason?.S,
      traceId: i.trace_id?.S,
    }));
  } finally {
    ddb.destroy();
  }
}
