import { toolFailure, type JsonValue, type ToolFailure } from "@tapedeck/protocol";
import { HTTP_METHODS, type HttpMethod } from "./http-tool.js";

/**
 * The arguments of an `http.fetch` call, checked. The schema has already been applied before
 * the call was journaled; this adds what a schema cannot say clearly: header names and values
 * that are valid on the wire, headers the engine owns, and no body on GET or HEAD.
 */

export interface FetchArgs {
  readonly url: string;
  readonly method: HttpMethod;
  /** Names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The credential the script named (`fetch(url, { credential })`); else the host's binding applies. */
  readonly credential?: string;
}

/**
 * Headers a script may not set: the engine sets them (framing, the target, the call's key and
 * trace), or they would let a request pretend to be something else (`host` is the checked name).
 */
const ENGINE_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "accept-encoding",
  "proxy-authorization",
  "proxy-connection",
  "idempotency-key",
  "traceparent",
  "tracestate",
]);

/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
/** No CR, LF or NUL: a value cannot start another header. */
const HEADER_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

export function parseFetchArgs(args: JsonValue): FetchArgs | ToolFailure {
  const invalid = (what: string) => toolFailure("invalid_arguments", `http.fetch: ${what}`);
  if (typeof args !== "object" || args === null || Array.isArray(args)) return invalid("the arguments must be an object { url, method, headers, body? }.");
  const { url, method, headers, body, credential } = args;
  if (typeof url !== "string" || url === "") return invalid("url must be a non-empty string.");
  const upper = typeof method === "string" ? method.toUpperCase() : "GET";
  if (!(HTTP_METHODS as readonly string[]).includes(upper))
    return invalid(`the method ${JSON.stringify(method)} is not supported; use one of ${HTTP_METHODS.join(", ")}.`);
  const checked: Record<string, string> = {};
  if (headers !== undefined) {
    if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return invalid("headers must be an object of strings.");
    for (const [rawName, value] of Object.entries(headers)) {
      const name = rawName.toLowerCase();
      if (!HEADER_NAME.test(name)) return invalid(`${JSON.stringify(rawName)} is not a valid header name.`);
      if (typeof value !== "string" || !HEADER_VALUE.test(value))
        return invalid(`the value of header "${name}" must be a string of printable characters without line breaks.`);
      if (ENGINE_HEADERS.has(name) || name.startsWith("proxy-")) return invalid(`the header "${name}" is set by Tapedeck; remove it from the request.`);
      checked[name] = value;
    }
  }
  if (body !== undefined && typeof body !== "string") return invalid("body must be a string (fetch sends an object as JSON).");
  if (body !== undefined && (upper === "GET" || upper === "HEAD")) return invalid(`a ${upper} request cannot have a body.`);
  if (credential !== undefined && typeof credential !== "string") return invalid("credential must be the name of a credential (a string).");
  return { url, method: upper as HttpMethod, headers: checked, ...(body === undefined ? {} : { body }), ...(credential === undefined ? {} : { credential }) };
}
