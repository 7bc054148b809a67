import { NAMESPACE_HEADER, namespaceError } from "@tapedeck/protocol/api";
import type { ApiKeyStore } from "../../store/api-key-store.js";
import { ApiError } from "../api-error.js";
import { API_KEY_PREFIX, findApiKey } from "./api-keys.js";
import type { InProcessChannel } from "../in-process-channel.js";
import { narrow, UNLIMITED, type Scope } from "../../tenancy/scope.js";
import { TOKEN_PREFIX, type TokenSigner } from "./tokens.js";
import type { RefusedCredential } from "../../logging/refused-credentials.js";

/** Who made a request, and what it may reach. */
export interface Caller {
  /** An API key, or an end user's token (which cannot mint tokens). */
  readonly kind: "key" | "token";
  /** The key's id (for a token: the key that minted it). */
  readonly keyId: string;
  /** The credential's scope, narrowed by the namespace header when one was sent. */
  readonly scope: Scope;
  /** An unlimited API key (the operator's), whatever the namespace header narrows its requests to. */
  readonly operator: boolean;
  /**
   * The end user the key or token itself is limited to (its namespace, not the header's
   * narrowing): the one namespace it may act in, besides an operator's any (`tenancy/end-user-access.ts`).
   */
  readonly endUser?: string;
}

export interface CallerSources {
  readonly apiKeys: ApiKeyStore;
  readonly tokens: TokenSigner;
  readonly now: () => number;
  /** Told why a request was refused (401), for the operator's log: the caller's answer says only that its credential was not accepted. */
  readonly refused?: ((reason: RefusedCredential) => void) | undefined;
  /** An embedded server's channel: its key stands for an unlimited API key. */
  readonly inProcess?: InProcessChannel | undefined;
}

/** The caller of a `/v1` request, from `Authorization: Bearer …`. Throws 401 (no or bad credential) or 403 (a namespace outside it). */
export async function identify(headers: Readonly<Record<string, string | string[] | undefined>>, sources: CallerSources): Promise<Caller> {
  const credential = bearer(headers.authorization, sources);
  const caller =
    credential === sources.inProcess?.key ? IN_PROCESS : credential.startsWith(TOKEN_PREFIX) ? byToken(credential, sources) : await byKey(credential, sources);
  // The header `Tapedeck.namespace(userId)` sends (Node lower-cases header names, and so is it written).
  const asked = headers[NAMESPACE_HEADER];
  if (asked === undefined) return caller;
  if (typeof asked !== "string") throw new ApiError("invalid_request", `The ${NAMESPACE_HEADER} header must be one end user's id, sent once.`);
  // HTTP drops spaces around a header's value before it gets here; the SDK refuses them before sending.
  const problem = namespaceError(asked, `The ${NAMESPACE_HEADER} header`);
  if (problem !== undefined) throw new ApiError("invalid_request", problem);
  const narrowed = narrow(caller.scope, { namespace: asked });
  if (!narrowed.ok) throw new ApiError("forbidden", narrowed.message);
  return { ...caller, scope: narrowed.scope };
}

/** The caller of an embedded client: the application itself, in this process. */
const IN_PROCESS: Caller = { kind: "key", keyId: "in-process", scope: UNLIMITED, operator: true };

function bearer(header: string | string[] | undefined, sources: CallerSources): string {
  const match = typeof header === "string" ? /^Bearer +(\S+) *$/i.exec(header) : null;
  if (!match) {
    sources.refused?.("missing");
    throw new ApiError("unauthorized", "Send an API key or an end user's token: Authorization: Bearer <key>. The server's operator gives out keys.");
  }
  return match[1]!;
}

async function byKey(secret: string, sources: CallerSources): Promise<Caller> {
  const key = secret.startsWith(API_KEY_PREFIX) ? await findApiKey(sources.apiKeys, secret) : undefined;
  if (!key) {
    // Said to whoever asks, so it tells nothing of the server: where keys live and how to make one is in the operator's log.
    sources.refused?.("unknown-key");
    throw new ApiError(
      "unauthorized",
      "Unknown API key. Check that the whole key (tdk_…) is sent to the server it was made for, or ask the server's operator for one.",
    );
  }
  const endUser = key.namespace === undefined ? {} : { endUser: key.namespace };
  return {
    kind: "key",
    keyId: key.id,
    scope: { ...(key.namespace === undefined ? {} : { namespace: key.namespace }), labels: key.labels ?? {} },
    operator: key.namespace === undefined && key.labels === undefined,
    ...endUser,
  };
}

function byToken(token: string, sources: CallerSources): Caller {
  const checked = sources.tokens.check(token, sources.now());
  if (checked.ok)
    return {
      kind: "token",
      keyId: checked.claims.key,
      scope: { namespace: checked.claims.ns, labels: checked.claims.labels },
      operator: false,
      endUser: checked.claims.ns,
    };
  if (checked.reason === "expired") {
    sources.refused?.("expired-token");
    throw new ApiError("unauthorized", `The token expired at ${new Date(checked.expiredAt).toISOString()}. Mint a new one with POST /v1/tokens.`);
  }
  sources.refused?.("invalid-token");
  throw new ApiError("unauthorized", "The token is not valid: it was not issued by this server, or it was changed.");
}
