import { WebhookHeader, type WebhookEvent } from "@tapedeck/protocol/api";

/**
 * Verifies a delivery from a Tapedeck server, the Standard Webhooks way (so their libraries
 * verify it too):
 *
 * - `webhook-id`: the event id (`evt_…`), also in the body; the same on every attempt.
 * - `webhook-timestamp`: when this attempt was signed, Unix seconds.
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256>` (several, space-separated, while a secret
 *   rotates), over `<webhook-id>.<webhook-timestamp>.<body>` with the endpoint's secret (the bytes
 *   that `whsec_<base64>` encodes).
 *
 * Pass the body exactly as received (the raw text or bytes, before any JSON parsing): a byte
 * changed fails the signature. Uses Web Crypto (`crypto.subtle`), so it runs in Node 20, Deno,
 * Bun, browsers and edge runtimes. An attempt older or newer than `toleranceSeconds` is refused,
 * so a captured delivery cannot be replayed later; deduplicate by `event.id` to make handling
 * idempotent (a delivery may come more than once).
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookVerification> {
  const id = header(headers, WebhookHeader.id);
  const timestamp = header(headers, WebhookHeader.timestamp);
  const signatures = header(headers, WebhookHeader.signature);
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    return refuse("missing_headers", `A Tapedeck webhook carries the headers ${Object.values(WebhookHeader).join(", ")}; this request lacks one.`);
  }
  if (!/^\d{1,15}$/.test(timestamp))
    return refuse("invalid_timestamp", `${WebhookHeader.timestamp} must be Unix seconds, not ${JSON.stringify(timestamp.slice(0, 40))}.`);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const skew = Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (skew > tolerance)
    return refuse(
      "timestamp_out_of_tolerance",
      `The delivery was signed ${Math.round(skew)} s away from now; at most ${tolerance} s is accepted (a replayed or delayed request, or a clock off).`,
    );
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), bytes);
  for (const candidate of signatures.split(" ")) {
    const [version, value] = candidate.split(",", 2);
    const mac = version === "v1" && value !== undefined ? base64Bytes(value) : undefined;
    if (mac && (await crypto.subtle.verify("HMAC", key, mac, signed))) return parsed(bytes, id);
  }
  return refuse(
    "invalid_signature",
    "No signature matches: the body was changed, or it was signed with another secret (check the endpoint's secret; pass the raw body, not re-serialised JSON).",
  );
}

/** Headers as a `Headers` object (fetch, edge runtimes) or a plain object (Node's `req.headers`). */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the signing time may be from now, seconds. Default 300 (five minutes). */
  readonly toleranceSeconds?: number;
  /** Now, ms since the epoch. Default `Date.now()`. */
  readonly now?: number;
}

export type WebhookVerification =
  /** Signed with the secret, in time: `event` is the parsed body. */
  | { readonly ok: true; readonly event: WebhookEvent }
  /** Not a genuine, timely delivery: answer 4xx and ignore it. `message` says why. */
  | { readonly ok: false; readonly reason: VerifyFailure; readonly message: string };

export type VerifyFailure = "missing_headers" | "invalid_timestamp" | "timestamp_out_of_tolerance" | "invalid_signature" | "invalid_body";

const DEFAULT_TOLERANCE_SECONDS = 300;
const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

function refuse(reason: VerifyFailure, message: string): WebhookVerification {
  return { ok: false, reason, message };
}

function parsed(bytes: Uint8Array, id: string): WebhookVerification {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return refuse("invalid_body", "The signature matches but the body is not JSON.");
  }
  if (typeof event !== "object" || event === null || (event as { id?: unknown }).id !== id) {
    return refuse("invalid_body", `The signature matches but the body is not the event ${id} the headers name.`);
  }
  // Signed by the server with this secret: the body is an event it wrote.
  return { ok: true, event: event as WebhookEvent };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === "string" ? value : value?.join(" ");
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = typeof secret === "string" && secret.startsWith(SECRET_PREFIX) ? base64Bytes(secret.slice(SECRET_PREFIX.length)) : undefined;
  if (!bytes || bytes.length === 0)
    throw new TypeError("verifyWebhook: the secret must be the endpoint's `whsec_…` secret, shown when the endpoint was created.");
  return bytes;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
