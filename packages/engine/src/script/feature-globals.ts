import type { SandboxFeature } from "../sandbox/sandbox.js";

/**
 * Declarations of the globals a toolset adds when it enables a feature, for the type-checker
 * (`CheckOptions.extraGlobals`). Each must describe exactly what the prelude installs for that
 * feature (`sandbox/prelude.ts`): a toolset without the feature has neither the declaration nor
 * the global, so `fetch` without `http` is a type error, and a ReferenceError if it ran anyway.
 */

/** `fetch`: the Web-standard subset the prelude implements on top of `http.fetch`. */
export const FETCH_GLOBALS = `/** Headers of a response; names are case-insensitive. Repeated headers are joined with ", ". */
interface Headers {
  get(name: string): string | null;
  has(name: string): boolean;
  forEach(callback: (value: string, name: string, headers: Headers) => void): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

/** A response, fully read: \`text()\` and \`json()\` may be called any number of times. */
interface Response {
  readonly status: number;
  readonly statusText: string;
  /** True for a status in 200–299. Any other status is still a response, not an error. */
  readonly ok: boolean;
  /** The final URL, after redirects. */
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: Headers;
  /** The body decoded as text (in the charset the response declares; UTF-8 by default). */
  text(): Promise<string>;
  /** The body parsed as JSON; rejects with a SyntaxError if it is not JSON. */
  json(): Promise<any>;
}

interface RequestInit {
  /** GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS. */
  method?: string;
  /** Header values are strings. Host, Content-Length, Idempotency-Key, traceparent and other framing headers are set by Tapedeck. */
  headers?: Record<string, string> | [string, string][];
  /** A string is sent as it is; any other JSON value is sent as JSON, with content-type application/json unless you set one. */
  body?: string | number | boolean | object | null;
  /**
   * The name of a credential to send (set by whoever runs the agent: tapedeck credentials set).
   * The engine injects it; the script never sees its value. It must be bound to the request's
   * host. Without it, a credential bound to the host is sent if there is one.
   */
  credential?: string;
}

/**
 * An HTTP request to a host the toolset allows, made by the engine and journaled: a replayed
 * run gets the recorded response and sends nothing. Private, loopback, link-local and cloud
 * metadata addresses are refused, redirects are checked the same way (at most 5), and a
 * response is bounded to 5 MiB and 30 seconds. A refusal rejects with a ToolError of code
 * "refused" that says why; a host that cannot be reached, with code "network_error".
 */
declare function fetch(url: string, init?: RequestInit): Promise<Response>;
`;

const DECLARATIONS: Readonly<Record<SandboxFeature, string>> = { fetch: FETCH_GLOBALS };

/** The declarations to add for `features` (see `sandboxGlobals`). */
export function featureGlobals(features: readonly SandboxFeature[]): string[] {
  return features.map((feature) => DECLARATIONS[feature]);
}
