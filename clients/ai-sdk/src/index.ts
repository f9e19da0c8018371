/**
 * @draftline/ai-sdk: turn a draftline deployment's tool list into Vercel AI SDK tools.
 *
 * `draftlineTools()` fetches `GET /api/tools?format=ai-sdk` (filtered by the caller's
 * scopes) and returns one AI SDK `tool()` per entry. Each tool's `execute` POSTs the
 * model's input to the tool function with the bearer token and the audit headers
 * (`X-Agent-Run-Id`, `X-Tool-Call-Id`, `X-Agent-Model`, `X-Prompt-Version`).
 *
 * Draft tools need no extra idempotency key: the server keys a write on the run id plus
 * the input's `client_ref`, so a retried call (a new tool-call id, the same arguments)
 * returns the original draft instead of creating a second one.
 *
 * Failures never throw into the agent loop: an error envelope, a timeout or a network
 * failure becomes a string the model can read ("Error FORBIDDEN (not retryable): ...").
 * Only a cancellation by the caller's own abort signal is re-thrown.
 */
import { jsonSchema, tool, type JSONSchema7, type Tool } from "ai";

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
}

/** One entry of `GET /api/tools?format=ai-sdk`. */
export interface DraftlineToolDefinition {
  name: string;
  title: string;
  description: string;
  module: string;
  tier: "read" | "draft";
  inputSchema: JSONSchema7;
  outputSchema?: JSONSchema7;
  url: string;
}

/** The document `GET /api/tools?format=ai-sdk` returns. */
export interface DraftlineToolList {
  version: 1;
  resource: string;
  tools: DraftlineToolDefinition[];
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

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Fetches the caller's tool list and returns it as AI SDK tools, keyed by tool name.
 *
 * Throws {@link DraftlineError} when the list cannot be fetched (bad token, server down);
 * the returned tools themselves report failures to the model as text.
 */
export async function draftlineTools(options: DraftlineToolsOptions): Promise<Record<string, Tool>> {
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
  const allowedOrigins = new Set([new URL(baseUrl).origin, new URL(list.resource).origin]);

  const tools: Record<string, Tool> = {};
  for (const def of list.tools) {
    if (!allowedOrigins.has(new URL(def.url).origin)) {
      // Never send the bearer token to a host other than the deployment itself.
      throw new DraftlineError(
        `draftline tool list: ${def.name} points at ${def.url}, outside ${[...allowedOrigins].join(" / ")}`,
        { code: "INVALID_TOOL_LIST", retryable: false },
      );
    }
    tools[def.name] = tool<unknown, unknown>({
      title: def.title,
      description: def.description,
      inputSchema: jsonSchema<unknown>(def.inputSchema),
      strict: true,
      execute: async (input, { toolCallId, abortSignal }) => {
        const headers: Record<string, string> = {
          "Content-Type": "application/json",
          Accept: "application/json",
          Authorization: `Bearer ${await resolveToken()}`,
          "X-Agent-Run-Id": options.runId,
          "X-Tool-Call-Id": toolCallId,
        };
        if (options.model) headers["X-Agent-Model"] = options.model;
        if (options.promptVersion) headers["X-Prompt-Version"] = options.promptVersion;
        return callTool(def, input, headers, fetchImpl, timeoutMs, abortSignal);
      },
    });
  }
  return tools;
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
