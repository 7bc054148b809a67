import { randomBytes } from "node:crypto";

/**
 * How an embedded client (`openEmbedded()`) reaches the routes without a socket: its requests are
 * injected into the app in memory. Two things a socket would carry travel here instead:
 *
 * - who is calling: `key`, a random bearer credential that exists only in this process and
 *   stands for an unlimited API key (an embedded client is the application itself);
 * - that the caller hung up: the request names (`REQUEST_HEADER`) the AbortSignal of its fetch,
 *   registered here, so a held request (a long poll) ends when the client aborts it, as a closed
 *   connection ends it over HTTP.
 *
 * A server that listens on a port has no channel, so neither header means anything there.
 */
export class InProcessChannel {
  static readonly REQUEST_HEADER = "tapedeck-in-process-request";
  readonly key = `tdi_${randomBytes(32).toString("base64url")}`;
  readonly #signals = new Map<string, AbortSignal>();
  #next = 0;

  /** Registers a request's signal; returns its id and a function that forgets it. */
  register(signal: AbortSignal): { readonly id: string; readonly release: () => void } {
    const id = String(++this.#next);
    this.#signals.set(id, signal);
    return { id, release: () => this.#signals.delete(id) };
  }

  signalOf(id: string | string[] | undefined): AbortSignal | undefined {
    return typeof id === "string" ? this.#signals.get(id) : undefined;
  }
}
