import type { FastifyInstance } from "fastify";
import type { EmbeddedConnection } from "@tapedeck/protocol";
import { InProcessChannel } from "../http/in-process-channel.js";

/**
 * A `fetch` that never leaves the process: each request is injected into the app (Fastify's
 * `inject`, no socket), so it meets the same validation, scopes and errors as over HTTP. An
 * aborted request reaches the route through the channel (a long poll ends at once), and the
 * promise then rejects as `fetch` would, with the signal's reason. Without a channel (`/mcp`'s
 * client, which sends the caller's own credential) the abort ends only the promise.
 */
export function inProcessFetch(app: FastifyInstance, channel?: InProcessChannel): EmbeddedConnection["fetch"] {
  return async (input, init) => {
    const url = new URL(input);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    // With a channel, every request is registered, with or without a signal: the routes tell an
    // embedded client's request by it (an event stream refuses one at once, where it would otherwise hold `inject` for ever).
    const registration = channel?.register(signal ?? NEVER_ABORTED);
    try {
      const response = await app.inject({
        method: (init.method ?? "GET") as "GET" | "POST" | "DELETE",
        url: url.pathname + url.search,
        headers: { ...(init.headers as Record<string, string> | undefined), ...(registration ? { [InProcessChannel.REQUEST_HEADER]: registration.id } : {}) },
        ...(typeof init.body === "string" ? { payload: init.body } : {}),
      });
      signal?.throwIfAborted();
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : String(value));
      }
      return new Response(response.statusCode === 204 ? null : response.rawPayload, { status: response.statusCode, headers });
    } finally {
      registration?.release();
    }
  };
}

/** The signal of a request sent without one. */
const NEVER_ABORTED = new AbortController().signal;
