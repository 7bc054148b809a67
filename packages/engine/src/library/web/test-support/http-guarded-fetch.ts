import type { HttpToolSource } from "../../../sources/http/http-tool-source.js";
import { fetchCall } from "../../../test-support/loopback-http.js";
import type { FetchedResponse, GuardedFetch } from "../guarded-fetch.js";

/**
 * The `GuardedFetch` web.fetch gets, made from the real `http` tool source as the engine will
 * make it: each request is an `http.fetch` call under the toolset's allow-list, with its SSRF
 * checks, pinned address, limits and redirect checks. A test fixture (the engine's wiring will
 * journal the request as a call of its own).
 */
export function guardedFetchFrom(source: HttpToolSource, allow: readonly string[]): GuardedFetch {
  return async (request, signal) => {
    const outcome = await source.call(fetchCall(allow, { url: request.url, method: request.method, headers: request.headers }, signal));
    if (outcome.kind === "result") return { kind: "result", response: outcome.value as unknown as FetchedResponse };
    if (outcome.kind === "failure") return { kind: "failure", failure: outcome.failure };
    return { kind: "failure", failure: { code: "network_error", message: outcome.kind === "interrupted" ? outcome.reason : outcome.park.message } };
  };
}
