/**
 * draftline's webhooks for an orchestrator: verify a delivery (the Standard Webhooks
 * specification: `webhook-id`, `webhook-timestamp`, `webhook-signature`, HMAC-SHA256
 * over `<id>.<timestamp>.<body>` keyed with the `whsec_` secret's bytes) and read it as
 * a typed event, so a run waiting for a person can resume when its draft is decided.
 *
 * Verification uses the platform's Web Crypto (Node ≥ 22), no dependency. During a
 * secret rotation pass both secrets: a delivery signed with either verifies.
 */

/** What an event announces. */
export type DraftlineEventType = "draft.created" | "draft.decided";

/** A draft's document, as an event names it. */
export interface DraftlineEventDocument {
  /** The document's id (`po_…`, `quote_…`). */
  id: string;
  /** Its number (`PO-SBY-000124`). */
  number: string;
  /** `purchase_order` or `quote` (a newer server may add kinds). */
  kind: string;
}

/** A person's decision, as a `draft.decided` event tells it. */
export interface DraftlineDecision {
  verdict: "approved" | "rejected";
  /** Who decided (their user id). */
  decided_by: string;
  /** A rejection's reason: the person's message for the run. */
  reason: string | null;
}

/** What an event says of its draft. */
export interface DraftlineEventData {
  tenant: string;
  branch: string;
  document: DraftlineEventDocument;
  /** The agent run that drafted it (`X-Agent-Run-Id`). */
  run_id: string | null;
  /** The tool call that drafted it (`draft.created` only; `null` on a decision). */
  tool_call_id: string | null;
  total: { amount: string; currency: string } | null;
  /** The page where a person reviews it. */
  review_url: string;
}

/** A verified draftline event: its id (the `webhook-id`, stable across retries) and payload. */
export type DraftlineEvent =
  | { id: string; type: "draft.created"; timestamp: string; data: DraftlineEventData }
  | { id: string; type: "draft.decided"; timestamp: string; data: DraftlineEventData & { decision: DraftlineDecision } };

/** Why a delivery was not accepted (forged, stale, or not a draftline event). */
export class DraftlineWebhookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DraftlineWebhookError";
  }
}

/** How {@link verifyDraftlineWebhook} judges a delivery's time. */
export interface VerifyDraftlineWebhookOptions {
  /** How far the delivery's `webhook-timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now (default: the clock). */
  now?: Date;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function secretBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  const bytes = Uint8Array.from(Buffer.from(encoded, "base64"));
  if (bytes.length < 16) throw new DraftlineWebhookError("the secret is not a whsec_ secret (whsec_ and base64)");
  return bytes;
}

async function sign(secret: string, signed: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * Verifies a delivery of draftline's webhooks and returns its event, typed. Throws
 * {@link DraftlineWebhookError} when a header is missing, the timestamp is outside the
 * tolerance (a replayed delivery), no signature matches any of `secrets`, or the body
 * is not a draftline event. Pass the body exactly as received (the raw bytes or text).
 */
export async function verifyDraftlineWebhook(
  secrets: string | readonly string[],
  body: string | Uint8Array,
  headers: HeaderSource,
  options: VerifyDraftlineWebhookOptions = {},
): Promise<DraftlineEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) {
    throw new DraftlineWebhookError("missing webhook-id, webhook-timestamp or webhook-signature");
  }
  const sent = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!Number.isInteger(sent) || Math.abs(now - sent) > (options.toleranceSeconds ?? 300)) {
    throw new DraftlineWebhookError("the webhook-timestamp is too old or too new (a replay?)");
  }
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  const offered = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Uint8Array.from(Buffer.from(s.slice(3), "base64")));
  for (const secret of typeof secrets === "string" ? [secrets] : secrets) {
    const expected = await sign(secret, signed);
    if (offered.some((signature) => sameBytes(signature, expected))) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new DraftlineWebhookError("the body is not JSON");
      }
      return parseDraftlineEvent(parsed, id);
    }
  }
  throw new DraftlineWebhookError("no signature matches the secret(s)");
}

function text(value: unknown, path: string): string {
  if (typeof value !== "string") throw new DraftlineWebhookError(`${path}: expected a string`);
  return value;
}

function nullableText(value: unknown, path: string): string | null {
  return value === null || value === undefined ? null : text(value, path);
}

/**
 * Reads a draftline event's payload (the webhook's JSON body) as a typed event with
 * delivery id `id`, checking each field it types; throws {@link DraftlineWebhookError}
 * naming the first field that is not as typed.
 */
export function parseDraftlineEvent(value: unknown, id: string): DraftlineEvent {
  const event = value as Record<string, any> | null;
  if (!event || typeof event !== "object") throw new DraftlineWebhookError("the event is not an object");
  const type = text(event.type, "type");
  const data = event.data as Record<string, any> | null;
  if (!data || typeof data !== "object") throw new DraftlineWebhookError("data: expected an object");
  const document = data.document as Record<string, any> | null;
  if (!document || typeof document !== "object") throw new DraftlineWebhookError("data.document: expected an object");
  const total = data.total as Record<string, any> | null | undefined;
  const common: DraftlineEventData = {
    tenant: text(data.tenant, "data.tenant"),
    branch: text(data.branch, "data.branch"),
    document: {
      id: text(document.id, "data.document.id"),
      number: text(document.number, "data.document.number"),
      kind: text(document.kind, "data.document.kind"),
    },
    run_id: nullableText(data.run_id, "data.run_id"),
    tool_call_id: nullableText(data.tool_call_id, "data.tool_call_id"),
    total: total
      ? { amount: text(total.amount, "data.total.amount"), currency: text(total.currency, "data.total.currency") }
      : null,
    review_url: text(data.review_url, "data.review_url"),
  };
  const timestamp = text(event.timestamp, "timestamp");
  if (type === "draft.created") return { id, type, timestamp, data: common };
  if (type === "draft.decided") {
    const decision = data.decision as Record<string, any> | null;
    if (!decision || typeof decision !== "object") throw new DraftlineWebhookError("data.decision: expected an object");
    const verdict = text(decision.verdict, "data.decision.verdict");
    if (verdict !== "approved" && verdict !== "rejected") {
      throw new DraftlineWebhookError("data.decision.verdict: expected approved or rejected");
    }
    return {
      id,
      type,
      timestamp,
      data: {
        ...common,
        decision: {
          verdict,
          decided_by: text(decision.decided_by, "data.decision.decided_by"),
          reason: nullableText(decision.reason, "data.decision.reason"),
        },
      },
    };
  }
  throw new DraftlineWebhookError(`type: ${type} is not a draftline event type`);
}
