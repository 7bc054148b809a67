import type { ToolFailure } from "@tapedeck/protocol";

/**
 * The one way a library tool reaches the network: a request through the `http` tool's rules
 * (allow-list, SSRF checks, the checked address pinned, redirects re-checked, 5 MiB / 30 s),
 * supplied by the engine. Library tools never open a connection themselves, so none of those
 * rules is re-implemented (or forgotten) here. The shapes are `http.fetch`'s arguments and result.
 */

export interface FetchRequest {
  readonly url: string;
  readonly method: "GET";
  /** Header names lower case. */
  readonly headers: Readonly<Record<string, string>>;
}

/** `http.fetch`'s result: any status is a response; the body decoded as text by its charset. */
export interface FetchedResponse {
  readonly status: number;
  readonly statusText: string;
  /** The final URL, after redirects. */
  readonly url: string;
  readonly redirected: boolean;
  /** Header names lower case; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type FetchOutcome =
  /** The server answered (any status). */
  | { readonly kind: "result"; readonly response: FetchedResponse }
  /** Refused by the rules (`refused`), unreachable (`network_error`), too large, too slow: nothing to read. */
  | { readonly kind: "failure"; readonly failure: ToolFailure };

export type GuardedFetch = (request: FetchRequest, signal: AbortSignal) => Promise<FetchOutcome>;
