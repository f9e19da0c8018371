/**
 * @draftline/ai-sdk: turn a draftline deployment's tool list into Vercel AI SDK 7 tools.
 *
 * `draftlineTools()` fetches `GET /api/tools?format=ai-sdk` (filtered by the caller's
 * scopes) and returns one AI SDK `tool()` per entry, plus the `toolApproval` policy for
 * them (AI SDK 7 configures approval on `generateText` / `streamText` / `ToolLoopAgent`,
 * not on the tool): read tools run without asking, draft tools wait for a person's
 * approval, and the caller may override both per tier or per tool name.
 *
 * Each tool's `execute` POSTs the model's input to the tool function with the bearer
 * token and the audit headers (`X-Agent-Run-Id`, `X-Tool-Call-Id`, `X-Agent-Model`,
 * `X-Prompt-Version`, `X-Tool-Approval`, `X-Tool-Approval-Reason`).
 *
 * Each call also continues the caller's trace (W3C `traceparent`, and `tracestate` when
 * non-empty): the active OpenTelemetry span context's, propagated by `@opentelemetry/api`
 * (an optional peer dependency; without it, a registered SDK or an active span, nothing is
 * sent), or what `options.traceContext` returns.
 *
 * Draft tools need no extra idempotency key: the server keys a write on the run id plus
 * the input's `client_ref`, so a retried call (a new tool-call id, the same arguments)
 * returns the original draft instead of creating a second one.
 *
 * Failures never throw into the agent loop: an error envelope, a timeout, a network
 * failure or a call that was not approved becomes a string the model can read
 * ("Error FORBIDDEN (not retryable): ..."). Only a cancellation by the caller's own abort
 * signal is re-thrown.
 */
import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type ModelMessage,
  type SingleToolApprovalFunction,
  type Tool,
  type ToolApprovalStatus,
} from "ai";

/**
 * An approval rule for one tool: an AI SDK 7 approval status, or a function of the tool
 * call's input returning one (the same shape as a per-tool entry of the SDK's
 * `toolApproval` option).
 *
 * - `"not-applicable"` (or `undefined`): run without asking; audited as
 *   `X-Tool-Approval: not-required`.
 * - `"user-approval"` / `{ type: "user-approval", reason }`: the SDK returns a
 *   `tool-approval-request` and runs the tool only after a `tool-approval-response`
 *   with `approved: true`; audited as `approved` with the response's `reason`.
 * - `"approved"` / `{ type: "approved", reason }`: approved automatically; audited as
 *   `approved` with this `reason`.
 * - `"denied"` / `{ type: "denied", reason }`: never runs (no request reaches the server).
 */
export type DraftlineApprovalRule =
  | ToolApprovalStatus
  | SingleToolApprovalFunction<unknown, unknown, unknown>;

/** How {@link draftlineTools} builds each tool's approval rule. */
export interface DraftlineApprovalOptions {
  /**
   * A rule per tier (`"read"`, `"draft"`, or a tier a newer server adds). Defaults:
   * `read` → `"not-applicable"` (never asks), every other tier → `"user-approval"`.
   */
  tiers?: Partial<Record<DraftlineToolDefinition["tier"], DraftlineApprovalRule>>;
  /** A rule per tool name; takes precedence over `tiers`. */
  tools?: Record<string, DraftlineApprovalRule>;
}

/** The W3C Trace Context one tool call sends: the `traceparent` and `tracestate` headers. */
export interface DraftlineTraceContext {
  /** e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`. */
  traceparent: string;
  /** Sent only when non-empty. */
  tracestate?: string | undefined;
}

/** Options of {@link draftlineTools}. */
export interface DraftlineToolsOptions {
  /** The deployment's base URL, e.g. `http://127.0.0.1:3000` or `https://erp-tools.example.com`. */
  baseUrl: string;
  /** A bearer token, or a function returning one (called before every request, so it may refresh). */
  token: string | (() => string | Promise<string>);
  /** The agent run's id; sent as `X-Agent-Run-Id` and, with `client_ref`, the idempotency key of drafts. */
  runId: string;
  /** The model's id, sent as `X-Agent-Model` (audit only). */
  model?: string;
  /** The prompt's version, sent as `X-Prompt-Version` (audit only). */
  promptVersion?: string;
  /** A fetch implementation (default: the global `fetch`). */
  fetch?: typeof fetch;
  /** Time limit of one HTTP request in milliseconds (listing and each tool call). Default 30 000. */
  timeoutMs?: number;
  /**
   * Overrides of the approval policy. By default read tools never ask and draft tools
   * ask a person (`"user-approval"`).
   */
  approval?: DraftlineApprovalOptions;
  /**
   * The trace each tool call continues, in place of the active OpenTelemetry span context:
   * called when the call's `execute` starts; its `traceparent` (and non-empty `tracestate`)
   * are sent as they are, `undefined` sends none. Without this option, the calls send the
   * active span context through `@opentelemetry/api`'s propagator, when the application has
   * installed and registered one.
   */
  traceContext?: (call: { toolName: string; toolCallId: string }) => DraftlineTraceContext | undefined;
}

/** MCP-style tool annotations, when the listing carries them. */
export interface DraftlineToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One entry of `GET /api/tools?format=ai-sdk`. */
export interface DraftlineToolDefinition {
  name: string;
  title: string;
  description: string;
  module: string;
  /** `"read"` or `"draft"` today; any other value is treated like a writing tier. */
  tier: "read" | "draft" | (string & {});
  inputSchema: JSONSchema7;
  outputSchema?: JSONSchema7;
  /** Optional; when present, a tool that is not read-only (or is destructive) always counts as writing. */
  annotations?: DraftlineToolAnnotations;
  url: string;
}

/** The document `GET /api/tools?format=ai-sdk` returns. */
export interface DraftlineToolList {
  version: 1;
  resource: string;
  tools: DraftlineToolDefinition[];
}

/** What {@link draftlineTools} returns. */
export interface DraftlineToolSet {
  /** The caller's tools, keyed by tool name: pass as `tools` to `generateText`, `streamText` or `ToolLoopAgent`. */
  tools: Record<string, Tool>;
  /**
   * The approval policy of those tools, keyed by tool name: pass as `toolApproval` to the
   * same call (spread it into a larger map to add rules for other tools). Change a draftline
   * tool's rule through {@link DraftlineToolsOptions.approval}, not by replacing its entry
   * here: each tool's `execute` checks the call against the rule it was built with.
   */
  toolApproval: Record<string, SingleToolApprovalFunction<unknown, unknown, unknown>>;
  /** The listing the tools were built from. */
  definitions: DraftlineToolDefinition[];
}

/** The `error` member of a draftline error envelope. */
export interface DraftlineErrorBody {
  code: string;
  message: string;
  retryable: boolean;
  details?: Array<{ path?: string; message?: string }>;
  retryAfterSeconds?: number;
}

/** Thrown by {@link draftlineTools} when the tool list cannot be fetched or is malformed. */
export class DraftlineError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number | undefined;

  constructor(message: string, options: { code: string; retryable: boolean; status?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DraftlineError";
    this.code = options.code;
    this.retryable = options.retryable;
    this.status = options.status;
  }
}

/** The longest approval reason sent in `X-Tool-Approval-Reason`, in Unicode code points (before encoding). */
export const MAX_APPROVAL_REASON_LENGTH = 500;

const DEFAULT_TIMEOUT_MS = 30_000;
/** Policy decisions remembered for execute; bounded so that never-executed calls cannot pile up. */
const MAX_REMEMBERED_DECISIONS = 1_000;

type NormalizedStatus =
  | { type: "not-applicable" }
  | { type: "approved" | "denied" | "user-approval"; reason?: string | undefined };

/** How one call is audited, or why it must not run. */
type Approval =
  | { kind: "not-required" }
  | { kind: "approved"; reason: string | undefined }
  | { kind: "refused"; text: string };

/**
 * Fetches the caller's tool list and returns it as AI SDK tools, keyed by tool name, with
 * their approval policy.
 *
 * Throws {@link DraftlineError} when the list cannot be fetched (bad token, server down);
 * the returned tools themselves report failures to the model as text.
 */
export async function draftlineTools(options: DraftlineToolsOptions): Promise<DraftlineToolSet> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof fetchImpl !== "function") {
    throw new TypeError("draftlineTools: no fetch implementation; pass options.fetch");
  }
  if (!options.runId) {
    throw new TypeError("draftlineTools: options.runId is required (it keys idempotent drafts)");
  }
  const resolveToken = async (): Promise<string> =>
    typeof options.token === "function" ? await options.token() : options.token;

  const list = await fetchToolList(baseUrl, await resolveToken(), fetchImpl, timeoutMs);
  // Loaded here, so that execute reads the active context before its first await.
  const otel = options.traceContext ? undefined : await openTelemetry();
  const allowedOrigins = new Set([new URL(baseUrl).origin, new URL(list.resource).origin]);

  // What the SDK's approval policy decided per tool call (the automatic decisions are not
  // visible to execute otherwise: the SDK passes execute the step's input messages only).
  const decisions = new Map<string, NormalizedStatus>();
  const remember = (key: string, status: NormalizedStatus) => {
    decisions.delete(key);
    decisions.set(key, status);
    if (decisions.size > MAX_REMEMBERED_DECISIONS) {
      const oldest = decisions.keys().next().value;
      if (oldest !== undefined) decisions.delete(oldest);
    }
  };

  const tools: Record<string, Tool> = {};
  const toolApproval: Record<string, SingleToolApprovalFunction<unknown, unknown, unknown>> = {};
  for (const def of list.tools) {
    if (!allowedOrigins.has(new URL(def.url).origin)) {
      // Never send the bearer token to a host other than the deployment itself.
      throw new DraftlineError(
        `draftline tool list: ${def.name} points at ${def.url}, outside ${[...allowedOrigins].join(" / ")}`,
        { code: "INVALID_TOOL_LIST", retryable: false },
      );
    }
    const rule = approvalRule(def, options.approval);
    const evaluate = async (
      input: unknown,
      ctx: { toolCallId: string; messages: ModelMessage[]; toolContext: unknown; runtimeContext: unknown },
    ): Promise<NormalizedStatus> => normalizeStatus(typeof rule === "function" ? await rule(input, ctx) : rule);

    toolApproval[def.name] = async (input, ctx) => {
      const status = await evaluate(input, ctx);
      remember(decisionKey(def.name, ctx.toolCallId), status);
      return status;
    };

    tools[def.name] = tool<unknown, unknown, Record<string, unknown>>({
      description: def.description,
      inputSchema: jsonSchema<unknown>(def.inputSchema),
      strict: true,
      // Not sent to the model; surfaces as `toolMetadata` on tool calls, approval requests and UI parts.
      metadata: { draftline: { title: def.title, module: def.module, tier: def.tier, writes: writes(def) } },
      execute: async (input, { toolCallId, messages, abortSignal, context }) => {
        const trace = options.traceContext
          ? options.traceContext({ toolName: def.name, toolCallId })
          : activeTraceContext(otel);
        // The rule's decision for this call: the SDK's (it asked toolApproval just before), or,
        // when execute is called outside the SDK's approval step (a custom loop, a direct
        // call), the rule applied here. A denial by the rule always wins, as in the SDK's own
        // re-validation of approvals taken from the message history.
        const key = decisionKey(def.name, toolCallId);
        const status =
          decisions.get(key) ??
          (await evaluate(input, { toolCallId, messages, toolContext: context, runtimeContext: undefined }));
        decisions.delete(key);
        const approval =
          status.type === "denied"
            ? approvalFromStatus(status, def)
            : (approvalInMessages(messages, toolCallId, def) ?? approvalFromStatus(status, def));
        if (approval.kind === "refused") return approval.text; // nothing is sent to the server

        const headers: Record<string, string> = {
          "Content-Type": "application/json",
          Accept: "application/json",
          Authorization: `Bearer ${await resolveToken()}`,
          "X-Agent-Run-Id": options.runId,
          "X-Tool-Call-Id": toolCallId,
          "X-Tool-Approval": approval.kind,
        };
        if (options.model) headers["X-Agent-Model"] = options.model;
        if (options.promptVersion) headers["X-Prompt-Version"] = options.promptVersion;
        const reason = approval.kind === "approved" ? encodeApprovalReason(approval.reason) : undefined;
        if (reason !== undefined) headers["X-Tool-Approval-Reason"] = reason;
        const traceparent = headerValue(trace?.traceparent);
        if (traceparent !== undefined) {
          headers.traceparent = traceparent;
          const tracestate = headerValue(trace?.tracestate);
          if (tracestate !== undefined) headers.tracestate = tracestate;
        }
        return callTool(def, input, headers, fetchImpl, timeoutMs, abortSignal);
      },
    });
  }
  return { tools, toolApproval, definitions: list.tools };
}

/** The part of `@opentelemetry/api` this package uses. */
type OpenTelemetryApi = Pick<typeof import("@opentelemetry/api"), "context" | "propagation">;

let openTelemetryApi: Promise<OpenTelemetryApi | undefined> | undefined;

/**
 * `@opentelemetry/api`, the application's own copy (an optional peer dependency), or
 * `undefined` when it is not installed. Imported once, on first use.
 */
function openTelemetry(): Promise<OpenTelemetryApi | undefined> {
  openTelemetryApi ??= import("@opentelemetry/api").then(
    (api) => (typeof api.propagation?.inject === "function" && typeof api.context?.active === "function" ? api : undefined),
    () => undefined,
  );
  return openTelemetryApi;
}

/**
 * The active context's `traceparent` and `tracestate`, as the application's registered
 * propagator writes them (no registered propagator, or no valid span in the context:
 * none). Never throws: a failing propagator only costs the trace, never the call.
 */
function activeTraceContext(otel: OpenTelemetryApi | undefined): DraftlineTraceContext | undefined {
  if (otel === undefined) return undefined;
  const carrier: Record<string, string> = {};
  try {
    otel.propagation.inject(otel.context.active(), carrier);
  } catch {
    return undefined;
  }
  // Only the W3C trace context crosses (not baggage or another propagator's headers).
  const { traceparent, tracestate } = carrier;
  return typeof traceparent === "string" ? { traceparent, tracestate } : undefined;
}

/**
 * A value fit for a header (trimmed, printable ASCII, non-empty), else `undefined`. The
 * server checks the trace context itself and ignores a malformed one; this only keeps a
 * value fetch would refuse from failing the call.
 */
function headerValue(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  return text !== "" && /^[\x20-\x7e]+$/.test(text) ? text : undefined;
}

/** Whether a tool changes anything: not the read tier, or annotated as not read-only / destructive. */
function writes(def: DraftlineToolDefinition): boolean {
  const a = isRecord(def.annotations) ? def.annotations : undefined;
  return def.tier !== "read" || a?.readOnlyHint === false || a?.destructiveHint === true;
}

/** The rule of one tool: the caller's per-name rule, else its per-tier rule, else the default. */
function approvalRule(def: DraftlineToolDefinition, overrides: DraftlineApprovalOptions | undefined): DraftlineApprovalRule {
  const byName = overrides?.tools;
  if (byName && Object.hasOwn(byName, def.name)) return byName[def.name];
  const byTier = overrides?.tiers;
  if (byTier && Object.hasOwn(byTier, def.tier)) return byTier[def.tier];
  return writes(def)
    ? {
        type: "user-approval",
        reason: `${def.name} (${def.title}) is a ${def.tier} tool: it writes to the ERP on behalf of the signed-in user.`,
      }
    : "not-applicable";
}

function normalizeStatus(status: ToolApprovalStatus): NormalizedStatus {
  if (status === undefined || status === "not-applicable") return { type: "not-applicable" };
  if (typeof status === "string") return { type: status };
  if (status.type === "not-applicable") return { type: "not-applicable" };
  return { type: status.type, reason: status.reason };
}

function decisionKey(toolName: string, toolCallId: string): string {
  return `${toolName}\u0000${toolCallId}`;
}

/**
 * The approval a person (or an automatic policy) recorded in the message history for
 * this tool call: the `tool-approval-request` naming the call and the
 * `tool-approval-response` answering it. This is how the SDK hands an approved call's
 * reason to a tool it resumes; `undefined` when the history has none.
 */
function approvalInMessages(
  messages: readonly ModelMessage[] | undefined,
  toolCallId: string,
  def: DraftlineToolDefinition,
): Approval | undefined {
  if (!Array.isArray(messages)) return undefined;
  const approvalIds = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) approvalIds.add(part.approvalId);
    }
  }
  if (approvalIds.size === 0) return undefined;
  let response: { approved: boolean; reason?: string | undefined } | undefined;
  for (const message of messages) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-response" && approvalIds.has(part.approvalId)) response = part;
    }
  }
  if (response === undefined) return undefined;
  const reason = typeof response.reason === "string" ? response.reason : undefined;
  return response.approved ? { kind: "approved", reason } : { kind: "refused", text: deniedText(def, reason) };
}

function approvalFromStatus(status: NormalizedStatus, def: DraftlineToolDefinition): Approval {
  switch (status.type) {
    case "not-applicable":
      return { kind: "not-required" };
    case "approved":
      return { kind: "approved", reason: status.reason };
    case "denied":
      return { kind: "refused", text: deniedText(def, status.reason) };
    case "user-approval":
      return {
        kind: "refused",
        text:
          `Error APPROVAL_REQUIRED (not retryable): ${def.name} runs only after a person approves the call, and ` +
          `this call was not approved. ${nothingSent(def)} Do not retry it; tell the user what you intended to do ` +
          "and that it needs their approval. (Developer: pass the toolApproval returned by draftlineTools() to " +
          "generateText, streamText or ToolLoopAgent.)",
      };
  }
}

function deniedText(def: DraftlineToolDefinition, reason: string | undefined): string {
  const text = reason === undefined ? "" : approvalReasonText(reason);
  const why = text ? `: ${text}${/[.!?]$/u.test(text) ? "" : "."}` : ".";
  return `Error APPROVAL_DENIED (not retryable): the call of ${def.name} was denied${why} ${nothingSent(def)} Do not repeat it.`;
}

function nothingSent(def: DraftlineToolDefinition): string {
  return writes(def) ? "Nothing was sent to the ERP; no draft was created." : "Nothing was sent to the ERP.";
}

/**
 * `X-Tool-Approval-Reason`: the reason as one line (every run of whitespace and control
 * characters, line breaks included, becomes one space; lone surrogates become U+FFFD),
 * cut to its first {@link MAX_APPROVAL_REASON_LENGTH} code points, percent-encoded as
 * UTF-8 (`encodeURIComponent`). `undefined` (no header) when there is no reason or it is
 * blank. The server refuses control characters and longer reasons, so a person's
 * multi-line note must not fail the approved call.
 */
function encodeApprovalReason(reason: string | undefined): string | undefined {
  if (typeof reason !== "string") return undefined;
  const text = approvalReasonText(reason);
  return text === "" ? undefined : encodeURIComponent(text);
}

/** A reason as the audit keeps it: one line of at most {@link MAX_APPROVAL_REASON_LENGTH} code points. */
function approvalReasonText(reason: string): string {
  const line = reason.toWellFormed().replace(/[\s\p{Cc}]+/gu, " ").trim();
  return Array.from(line).slice(0, MAX_APPROVAL_REASON_LENGTH).join("").trimEnd();
}

async function fetchToolList(
  baseUrl: string,
  token: string,
  fetchImpl: typeof fetch,
  timeoutMs: number,
): Promise<DraftlineToolList> {
  const url = `${baseUrl}/api/tools?format=ai-sdk`;
  let status: number;
  let text: string;
  try {
    const res = await fetchImpl(url, {
      method: "GET",
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (cause) {
    throw new DraftlineError(`draftline tool list: GET ${url} failed: ${describe(cause)}`, {
      code: isTimeout(cause) ? "TIMEOUT" : "NETWORK_ERROR",
      retryable: true,
      cause,
    });
  }
  const body = parseJson(text);
  if (status !== 200 || !isRecord(body) || body.version !== 1 || !Array.isArray(body.tools)) {
    const err = isRecord(body) && isErrorBody(body.error) ? body.error : undefined;
    throw new DraftlineError(
      `draftline tool list: GET ${url} answered ${status}` +
        (err ? `: ${err.code}: ${err.message}` : text ? `: ${text.slice(0, 300)}` : ""),
      { code: err?.code ?? "INVALID_TOOL_LIST", retryable: err?.retryable ?? status >= 500, status },
    );
  }
  return body as unknown as DraftlineToolList;
}

async function callTool(
  def: DraftlineToolDefinition,
  input: unknown,
  headers: Record<string, string>,
  fetchImpl: typeof fetch,
  timeoutMs: number,
  abortSignal: AbortSignal | undefined,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = abortSignal ? AbortSignal.any([abortSignal, timeout]) : timeout;
  let status: number;
  let text: string;
  try {
    const res = await fetchImpl(def.url, { method: "POST", headers, body: JSON.stringify(input), signal });
    status = res.status;
    text = await res.text();
  } catch (cause) {
    if (abortSignal?.aborted) throw abortSignal.reason ?? cause; // the caller cancelled the run
    return transportFailure(def, timeout.aborted || isTimeout(cause) ? "timeout" : describe(cause), timeoutMs);
  }

  const body = parseJson(text);
  if (isRecord(body) && body.ok === true) {
    const replayed = body.replayed === true;
    if (replayed && isRecord(body.data) && !("replayed" in body.data)) {
      // Tell the model this is the earlier result of the same call, not a new document.
      return { ...body.data, replayed: true };
    }
    return body.data;
  }
  if (isRecord(body) && body.ok === false && isErrorBody(body.error)) {
    return formatToolError(body.error, typeof body.requestId === "string" ? body.requestId : undefined);
  }
  // Not a draftline envelope: a proxy or platform error page.
  const retryable = status === 429 || status >= 500;
  return (
    `Error HTTP_${status} (${retryable ? "retryable" : "not retryable"}): ${def.name} answered HTTP ${status} ` +
    `without a draftline response${text ? ` (${oneLine(text).slice(0, 200)})` : ""}. ` +
    (def.tier === "draft"
      ? "It is unknown whether the draft was created; calling again with exactly the same arguments (the same client_ref) is safe."
      : "Nothing was changed.")
  );
}

/** Formats a draftline error envelope as the text a model reads. */
export function formatToolError(error: DraftlineErrorBody, requestId?: string): string {
  let text = `Error ${error.code} (${error.retryable ? "retryable" : "not retryable"}): ${error.message}`;
  // List the per-field details the message does not already spell out.
  const details = (Array.isArray(error.details) ? error.details : []).filter(
    (d) => isRecord(d) && typeof d.message === "string" && !error.message.includes(d.message),
  );
  if (details.length > 0) {
    text += "\n" + details.map((d) => `- ${d.path ? `${d.path}: ` : ""}${d.message}`).join("\n");
  }
  if (typeof error.retryAfterSeconds === "number") {
    text += `\nRetry after ${error.retryAfterSeconds} seconds.`;
  }
  if (requestId) text += `\n(request id ${requestId})`;
  return text;
}

function transportFailure(def: DraftlineToolDefinition, reason: string, timeoutMs: number): string {
  const what =
    reason === "timeout"
      ? `Error TIMEOUT (retryable): ${def.name} did not answer within ${Math.round(timeoutMs / 100) / 10} s.`
      : `Error NETWORK_ERROR (retryable): ${def.name} could not be reached (${reason}).`;
  return def.tier === "draft"
    ? `${what} It is unknown whether the draft was created. Call ${def.name} again with exactly the same arguments, ` +
        "including the same client_ref: if the draft exists you get it back (replayed) instead of a duplicate."
    : `${what} Nothing was changed; you may call it again.`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isErrorBody(v: unknown): v is DraftlineErrorBody {
  return isRecord(v) && typeof v.code === "string" && typeof v.message === "string" && typeof v.retryable === "boolean";
}

function isTimeout(err: unknown): boolean {
  return isRecord(err) && (err.name === "TimeoutError" || (isRecord(err.cause) && err.cause.name === "TimeoutError"));
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return oneLine(`${err.message}${cause}`);
  }
  return oneLine(String(err));
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

export {
  DraftlineWebhookError,
  parseDraftlineEvent,
  verifyDraftlineWebhook,
  type DraftlineDecision,
  type DraftlineEvent,
  type DraftlineEventData,
  type DraftlineEventDocument,
  type DraftlineEventType,
  type VerifyDraftlineWebhookOptions,
} from "./webhooks.js";
