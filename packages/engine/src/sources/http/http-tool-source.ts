import { STATUS_CODES } from "node:http";
import { toolFailure, type JsonObject, type ToolFailure } from "@tapedeck/protocol";
import { request as undiciRequest, type Dispatcher } from "undici";
import { HTTP_MAX_REDIRECTS, HTTP_MAX_RESPONSE_BYTES, HTTP_TIMEOUT_MS } from "../../limits.js";
import { injectCredential } from "../../secrets/credential-injection.js";
import { sameCredential, type CredentialResolver, type InjectedCredential } from "../../secrets/credential-resolver.js";
import type { KnownSecret } from "../../secrets/leak-scanner.js";
import type { CredentialUse } from "../../secrets/derived-credential-use.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "../tool-source.js";
import { parseFetchArgs, type FetchArgs } from "./fetch-args.js";
import { HTTP_FETCH_TOOL, isHttpFetch, type HttpMethod } from "./http-tool.js";
import { PinnedAgents } from "./pinned-agents.js";
import { refusal, RefusalRule } from "./refusal.js";
import { addressRefusal, checkTarget, type TargetPolicy } from "./request-target.js";
import { describeNetError, resolvePublicAddress } from "./public-address.js";
import { readBody } from "./response-body.js";
import { systemResolver, type HostResolver } from "./resolver.js";

/**
 * The `builtin` tool source of `http.fetch`: sends one request for a script, never from the
 * sandbox, and answers with the response as data that the journal records (so replay never
 * sends it again).
 *
 * Invariants (DESIGN §8):
 * - Every URL, the first and each redirect's, passes `checkTarget` (scheme, no credentials,
 *   allow-list, IP literals' ranges), then the caller's `targetCheck` if any (a user tool's
 *   grant, with the method that hop is sent with), before anything is resolved or sent.
 * - A name is resolved once per URL; every answer must be in an allowed range, and the
 *   connection goes to the first answer, the one checked (`PinnedAgents`): no second lookup.
 * - At most `maxRedirects` redirects; a body larger than `maxResponseBytes` (on the wire, or
 *   decoded: a gzip, deflate or br body is decoded, `response-body.ts`) and a request longer
 *   than `timeoutMs` (redirects and body included) fail with a clear `ToolError`.
 * - Every refusal is a failure of code `refused` saying which rule and which host or address.
 * - The call's idempotency key goes out as `Idempotency-Key`, its trace context as `traceparent`.
 * - Its results are not leak-scanned here: every result of every source is, where results
 *   become a `CallOutcome` (`runs/dispatcher.ts`), before the journal or the script sees them. The
 *   outcome names the credential values it sent (`secrets`), so that scan redacts them too.
 * - A credential (`credentials`) is resolved after the first URL passed every check, and put
 *   into a copy of the request to that URL's origin only: never into a redirect to another
 *   origin, never into the arguments the journal recorded.
 */

export interface HttpToolOptions {
  /** How names are resolved. Default: the system resolver (`getaddrinfo`). */
  readonly resolver?: HostResolver;
  /** Longest a request may take, redirects and body included, ms. Default 30 s (`HTTP_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
  /** Largest response body, bytes. Default 5 MiB (`HTTP_MAX_RESPONSE_BYTES`). */
  readonly maxResponseBytes?: number;
  /** Redirects followed. Default 5 (`HTTP_MAX_REDIRECTS`). */
  readonly maxRedirects?: number;
  /**
   * TESTS ONLY. Lets requests reach loopback addresses (127.0.0.0/8, ::1) so tests can serve an
   * allowed host on a local server. Every other refused range stays refused, and the allow-list
   * still applies. Default false; no toolset file can turn it on (see `EngineOptions`).
   */
  readonly unsafeAllowLoopbackForTests?: boolean;
  /** Finds the credential a run's request to a host carries (the engine's vault). Default: none. */
  readonly credentials?: CredentialResolver;
}

/** Sent when the script sets none. */
const USER_AGENT = "tapedeck-http/0.1";

/** A redirect's body is read (and thrown away) up to this much, then the connection is dropped. */
const REDIRECT_BODY_BYTES = 64 * 1024;

/** Headers describing a body, dropped when a redirect turns the request into a GET (Fetch standard). */
const BODY_HEADERS = ["content-type", "content-encoding", "content-language", "content-location"];

/** Headers carrying credentials, dropped when a redirect goes to another origin. */
const CREDENTIAL_HEADERS = ["authorization", "cookie"];

/** Errors that happen before the request leaves: nothing was sent, the call answers `network_error`. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

export class HttpToolSource implements ToolSource {
  readonly #resolver: HostResolver;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #maxRedirects: number;
  readonly #allowLoopback: boolean;
  readonly #agents: PinnedAgents;
  readonly #credentials: CredentialResolver | undefined;

  constructor(options: HttpToolOptions = {}) {
    this.#resolver = options.resolver ?? systemResolver;
    this.#timeoutMs = options.timeoutMs ?? HTTP_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? HTTP_MAX_RESPONSE_BYTES;
    this.#maxRedirects = options.maxRedirects ?? HTTP_MAX_REDIRECTS;
    this.#allowLoopback = options.unsafeAllowLoopbackForTests === true;
    this.#agents = new PinnedAgents({ connectTimeoutMs: this.#timeoutMs, timeoutMs: this.#timeoutMs });
    this.#credentials = options.credentials;
  }

  /** Sends the request; never rejects (see `ToolSource.call`). */
  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    if (!isHttpFetch(request.tool)) {
      return failed(
        toolFailure(
          "unknown_tool",
          `This engine has no built-in ${request.tool.group}.${request.tool.name}; its built-in tool source serves only ${HTTP_FETCH_TOOL}.`,
        ),
      );
    }
    const args = parseFetchArgs(request.args);
    if ("code" in args) return failed(args);
    // One signal for both ends of the request: the time bound, and the run no longer waiting.
    // (Linked by hand: AbortSignal.any costs ~25 µs a request on Node 20.)
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error("timeout"));
    }, this.#timeoutMs);
    const stop = () => controller.abort(request.signal.reason);
    if (request.signal.aborted) stop();
    else request.signal.addEventListener("abort", stop, { once: true });
    // Filled by #send once a credential is resolved: every outcome from then on names it.
    const sent: KnownSecret[] = [];
    const withSecrets = (outcome: ToolOutcome): ToolOutcome => (sent.length === 0 ? outcome : { ...outcome, secrets: sent });
    try {
      return withSecrets(await this.#send(args, request, controller.signal, sent));
    } catch (error) {
      if (timedOut) return withSecrets(failed(this.#timedOut(args)));
      if (request.signal.aborted) return { kind: "interrupted", reason: "the run stopped waiting for this request" };
      return withSecrets(errorOutcome(error, args));
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", stop);
    }
  }

  async close(): Promise<void> {
    await this.#agents.close();
  }

  /** The request and its redirects, each checked like the first. */
  async #send(args: FetchArgs, call: ToolCallRequest, signal: AbortSignal, sent: KnownSecret[]): Promise<ToolOutcome> {
    const policy: TargetPolicy = { allow: call.tool.http?.allow ?? [], allowLoopback: this.#allowLoopback };
    let { url, method, body } = args;
    const headers: Record<string, string> = {
      "user-agent": USER_AGENT,
      ...args.headers,
      "idempotency-key": call.idempotencyKey,
      traceparent: call.traceparent,
    };
    let from: string | undefined;
    let credential: InjectedCredential | undefined;
    let renewed = false;
    for (let redirects = 0; ; redirects++) {
      const target = checkTarget(url, policy);
      if (!target.ok) return failed(redirected(target.failure, from));
      const outside = call.targetCheck?.(target.url.href, method);
      if (outside !== undefined) return failed(redirected(refusal(RefusalRule.outsideGrant, outside, { url: target.url.href }), from));
      const address = target.address ?? (await this.#resolve(target.host, policy, signal));
      if (typeof address !== "string") return failed(redirected(address, from));
      if (redirects === 0 && this.#credentials) {
        const found = await this.#credentials(call.runId, target.host, target.url.origin, args.credential, credentialUse(call));
        if (found.kind === "failure") return failed(found.failure);
        if (found.kind === "expired") return { kind: "park", park: found.park };
        credential = found.credential;
        if (credential) sent.push(...credential.secrets);
      }
      // Only to the origin the credential was resolved for: a redirect elsewhere goes without it.
      const outgoing =
        credential !== undefined && target.url.origin === credential.origin
          ? injectCredential(credential.secret, headers, target.url)
          : { headers, url: target.url };
      const response = await undiciRequest(outgoing.url, {
        dispatcher: this.#agents.for(address),
        method,
        headers: outgoing.headers,
        ...(body === undefined ? {} : { body }),
        signal,
      });
      if (response.statusCode === UNAUTHORIZED && outgoing.headers !== headers) {
        // The credential the vault gave was refused: the request did nothing. If it was renewed
        // while the request was in flight, send it again now with the new one (once); else the
        // call waits for a renewal.
        await response.body.dump({ limit: REDIRECT_BODY_BYTES, signal });
        const now = renewed ? undefined : await this.#credentials!(call.runId, target.host, target.url.origin, args.credential, credentialUse(call));
        if (now?.kind !== "ok" || now.credential === undefined || sameCredential(now.credential, credential!)) return expired(credential!, target.url);
        renewed = true;
        credential = now.credential;
        sent.push(...credential.secrets);
        redirects--;
        continue;
      }
      const location = isRedirect(response.statusCode) ? headerValue(response.headers, "location") : undefined;
      if (location === undefined) return this.#read(response, target.url, redirects > 0, signal);
      await response.body.dump({ limit: REDIRECT_BODY_BYTES, signal });
      if (redirects >= this.#maxRedirects) {
        return failed(
          refusal(
            RefusalRule.tooManyRedirects,
            `${args.url} redirected more than ${this.#maxRedirects} times (the last to ${location}); follow fewer redirects by requesting the final URL directly.`,
            { url: args.url },
          ),
        );
      }
      let next: URL;
      try {
        next = new URL(location, target.url);
      } catch {
        return failed(
          refusal(
            RefusalRule.badRedirect,
            `${target.url.href} answered ${response.statusCode} with the Location ${JSON.stringify(location)}, which is not a URL.`,
            { url: target.url.href },
          ),
        );
      }
      ({ method, body } = redirectedRequest(response.statusCode, method, body, headers));
      if (next.origin !== target.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
      from = target.url.href;
      url = next.href;
    }
  }

  /** The address to connect to for `host`, or the failure that says why there is none. */
  async #resolve(host: string, policy: TargetPolicy, signal: AbortSignal): Promise<string | ToolFailure> {
    const found = await resolvePublicAddress(host, { resolver: this.#resolver, allowLoopback: policy.allowLoopback, signal });
    if (found.ok) return found.address;
    if (found.reason === "refused") return addressRefusal(host, found.verdict, host);
    return toolFailure("network_error", `Could not resolve ${host} (${found.error}); nothing was sent. Check the host name.`, {
      retryable: true,
      details: { host },
    });
  }

  /** Reads the body (bounded) into the result the journal records. */
  async #read(response: Dispatcher.ResponseData, url: URL, redirected: boolean, signal: AbortSignal): Promise<ToolOutcome> {
    const declared = Number(headerValue(response.headers, "content-length") ?? NaN);
    if (declared > this.#maxBytes) {
      response.body.destroy();
      return failed(this.#tooLarge(url, `declares ${declared} bytes`));
    }
    const read = await readBody(response.body, headerValue(response.headers, "content-encoding"), this.#maxBytes);
    signal.throwIfAborted();
    if (read.kind === "too_large") return failed(this.#tooLarge(url, read.what));
    if (read.kind === "undecodable") {
      return failed(
        toolFailure("tool_error", `The response of ${url.href} says its body is ${read.encoding}-encoded, but it does not decode (${read.reason}).`, {
          details: { url: url.href, contentEncoding: read.encoding },
        }),
      );
    }
    const headers: JsonObject = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const status = response.statusCode;
    const body = decode(read.bytes, headerValue(response.headers, "content-type"));
    return { kind: "result", value: { status, statusText: STATUS_CODES[status] ?? "", url: url.href, redirected, headers, body } };
  }

  #tooLarge(url: URL, what: string): ToolFailure {
    return toolFailure(
      "result_too_large",
      `The response of ${url.href} ${what}; the http tool reads at most ${this.#maxBytes} bytes (5 MiB by default), on the wire and decoded, so the call failed. Ask for less: a page, a range, a filter.`,
      { details: { url: url.href, limitBytes: this.#maxBytes } },
    );
  }

  #timedOut(args: FetchArgs): ToolFailure {
    return toolFailure(
      "timeout",
      `${args.method} ${args.url} did not complete within ${this.#timeoutMs} ms, the http tool's limit (redirects and body included); its outcome is unknown. Catch this error to go on, or try again later.`,
      { retryable: true, details: { url: args.url, limitMs: this.#timeoutMs } },
    );
  }
}

function failed(failure: ToolFailure): ToolOutcome {
  return { kind: "failure", failure };
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Method and body after a redirect (Fetch standard): 303, and 301/302 after a POST, become a GET without a body. */
function redirectedRequest(
  status: number,
  method: HttpMethod,
  body: string | undefined,
  headers: Record<string, string>,
): { method: HttpMethod; body: string | undefined } {
  const toGet = (status === 303 && method !== "HEAD" && method !== "GET") || ((status === 301 || status === 302) && method === "POST");
  if (!toGet) return { method, body };
  for (const name of BODY_HEADERS) delete headers[name];
  return { method: "GET", body: undefined };
}

/** A refusal of a URL reached by a redirect says where the redirect came from. */
function redirected(failure: ToolFailure, from: string | undefined): ToolFailure {
  if (from === undefined) return failure;
  const details = typeof failure.details === "object" && failure.details !== null && !Array.isArray(failure.details) ? failure.details : {};
  return toolFailure(failure.code, `${failure.message} (This URL came from a redirect of ${from}.)`, {
    retryable: failure.retryable,
    details: { ...details, redirectedFrom: from },
  });
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The body as text, in the charset the response declares (UTF-8 when none or unknown); invalid bytes become U+FFFD. */
function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/** What an error while sending means: nothing sent (`network_error`), or the outcome is unknown (an interruption: the policy decides). */
function errorOutcome(error: unknown, args: FetchArgs): ToolOutcome {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (NOT_SENT_CODES.has(code) || code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_"))) {
    return failed(
      toolFailure("network_error", `Could not connect for ${args.method} ${args.url} (${describeNetError(error)}); nothing was sent.`, {
        retryable: true,
        details: { url: args.url, cause: code },
      }),
    );
  }
  if (error instanceof TypeError || (error as { name?: unknown }).name === "InvalidArgumentError") {
    return failed(toolFailure("invalid_arguments", `http.fetch: ${describeNetError(error)}`));
  }
  return { kind: "interrupted", reason: `the connection failed during ${args.method} ${args.url} (${describeNetError(error)})` };
}

const UNAUTHORIZED = 401;

/** The call parks until the credential is renewed: it is sent again then, with the same idempotency key. */
function expired(credential: InjectedCredential, url: URL): ToolOutcome {
  const message = `${url.origin} answered 401 Unauthorized to the credential "${credential.name}": it has expired or was revoked. The call waits; renew the credential (tapedeck credentials set, or the API) and it is sent again with the same idempotency key, or reject it.`;
  return { kind: "park", park: { reason: "credentials.expired", message, credential: credential.name } };
}

/** Who sends the request's credential: the user tool whose fetch it is, or the script. */
function credentialUse(call: ToolCallRequest): CredentialUse {
  return call.fetchOf === undefined ? { kind: "http" } : { kind: "user", tool: call.fetchOf };
}
