import { classifyAddress, type AddressVerdict } from "../../net/address-ranges.js";
import { passes } from "./request-target.js";
import type { HostResolver } from "./resolver.js";

/** Where a connection for a host may go, or why nowhere. */
export type PublicAddress =
  /** Connect to `address` (every answer passed the check). */
  | { readonly ok: true; readonly address: string }
  /** The name did not resolve: `error` says why (no answer, a lookup failure). */
  | { readonly ok: false; readonly reason: "unresolved"; readonly host: string; readonly error: string }
  /** An answer is in a refused range: nothing may be sent. */
  | { readonly ok: false; readonly reason: "refused"; readonly host: string; readonly verdict: Extract<AddressVerdict, { allowed: false }> };

/**
 * Resolves a host name once and returns the address a connection may go to: the first answer,
 * once every answer has passed the address check (a name that mixes public and private answers
 * is refused). The caller connects to that address (see `PinnedAgents`), never to the name, so
 * a second lookup cannot answer differently (DNS rebinding). Used by the `http` tool and by the
 * server's webhook deliveries to tenants' endpoints; each words the refusal for its own reader.
 * Rejects only when `signal` aborts.
 */
export async function resolvePublicAddress(
  host: string,
  options: { readonly resolver: HostResolver; readonly signal: AbortSignal; readonly allowLoopback?: boolean },
): Promise<PublicAddress> {
  const { resolver, signal } = options;
  let answers: readonly string[];
  try {
    answers = await abortable(resolver(host, signal), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    return { ok: false, reason: "unresolved", host, error: describeNetError(error) };
  }
  const [first] = answers;
  if (first === undefined) return { ok: false, reason: "unresolved", host, error: "it has no address" };
  for (const answer of answers) {
    const verdict = classifyAddress(answer);
    if (!passes(verdict, { allowLoopback: options.allowLoopback === true }))
      return { ok: false, reason: "refused", host, verdict: verdict as Extract<AddressVerdict, { allowed: false }> };
  }
  return { ok: true, address: first.startsWith("[") ? first.slice(1, -1) : first };
}

/** A network error's message with its code (undici and `getaddrinfo` keep the useful part in `code`). */
export function describeNetError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

/** `promise`, or a rejection as soon as `signal` aborts (a system lookup cannot be cancelled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
