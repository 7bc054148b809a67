import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * Expiring bearer credentials for a Streamable HTTP MCP server (seed 002).
 *
 * Invariants:
 * - `token()` is read before every HTTP request (POST, the SSE GET, the session DELETE), so a
 *   rotated token is used from the next request on; nothing is cached here.
 * - A 401 calls `onUnauthorized()` once and sends that request once more with a fresh
 *   `token()`. A second 401 fails the request with `McpUnauthorizedError`: never a loop.
 * - Concurrent requests that meet a 401 together share one `onUnauthorized()`.
 */
export interface McpBearerAuth {
  /** The current access token, sent as `Authorization: Bearer <token>`. */
  token(): string | Promise<string>;
  /** Refreshes the credentials after the server answered 401. */
  onUnauthorized(): void | Promise<void>;
}

/** The server refused the credentials even after a refresh: retrying will not help. */
export class McpUnauthorizedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpUnauthorizedError";
  }
}

const UNAUTHORIZED = 401;

/** A `fetch` that carries `auth`'s bearer token and refreshes it once on a 401. */
export function bearerFetch(auth: McpBearerAuth, label: string, base: FetchLike = fetch): FetchLike {
  let refreshing: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    refreshing ??= Promise.resolve(auth.onUnauthorized()).finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  };
  const send = async (url: string | URL, init: RequestInit | undefined): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${await auth.token()}`);
    return base(url, { ...init, headers });
  };
  return async (url, init) => {
    const first = await send(url, init);
    if (first.status !== UNAUTHORIZED) return first;
    await first.body?.cancel();
    await refresh();
    const second = await send(url, init);
    if (second.status !== UNAUTHORIZED) return second;
    await second.body?.cancel();
    throw new McpUnauthorizedError(
      `${label} answered 401 Unauthorized again after auth.onUnauthorized() refreshed the credentials: ` +
        `the token from auth.token() is still rejected. Fix the credentials; the request was not retried further.`,
    );
  };
}

/** The server answered 401 to a credential from the vault: it must be renewed (the call parks). */
export class McpCredentialRefusedError extends McpUnauthorizedError {
  constructor(
    label: string,
    readonly credential: string,
  ) {
    super(`${label} answered 401 Unauthorized to the credential "${credential}": it has expired or was revoked.`);
    this.name = "McpCredentialRefusedError";
  }
}

/**
 * A `fetch` that sends a vault credential's headers on every request (over the recipe's: the
 * vault's credential wins, as for `http`) and fails with `McpCredentialRefusedError` on a 401.
 */
export function vaultFetch(
  credential: { readonly name: string; readonly headers: Readonly<Record<string, string>> },
  label: string,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(credential.headers)) headers.set(name, value);
    const response = await base(url, { ...init, headers });
    if (response.status !== UNAUTHORIZED) return response;
    await response.body?.cancel();
    throw new McpCredentialRefusedError(label, credential.name);
  };
}

/** Throws when `auth` and a recipe `Authorization` header would both set the same header. */
export function assertOneAuthorization(
  label: string,
  headers: Readonly<Record<string, string>> | undefined,
  options: { readonly auth?: unknown; readonly authProvider?: unknown },
): void {
  const hasHeader = Object.keys(headers ?? {}).some((name) => name.toLowerCase() === "authorization");
  const sources = [hasHeader && "an Authorization header", options.auth !== undefined && "auth", options.authProvider !== undefined && "authProvider"];
  const set = sources.filter((source): source is string => source !== false);
  if (set.length > 1) {
    throw new Error(
      `MCP server ${label}: ${set.join(" and ")} are set together, but they are mutually exclusive (each supplies the Authorization header). ` +
        `Keep one: auth for tokens that expire, authProvider for OAuth, a fixed header for a static key.`,
    );
  }
}
