import type { JsonObject, PinnedTool } from "@tapedeck/protocol";

/**
 * The built-in `http.fetch` tool: its name and schemas (`toolset/pin-http.ts` pins it). Scripts never import it: the sandbox's
 * `fetch` global issues its calls. Pinning it as an ordinary tool (source `builtin`) is what
 * keeps it uniform with every other tool: its arguments are validated against the schema below
 * before the call is journaled, its policy comes from `policies["http.fetch"]`, the dispatcher
 * sends it (with its idempotency key and trace context) to the `builtin` tool source, and its
 * result is recorded and replayed like any result.
 */

export const HTTP_GROUP = "http";
export const HTTP_FETCH = "fetch";
/** `group.name` of the tool, as the journal names its calls. */
export const HTTP_FETCH_TOOL = `${HTTP_GROUP}.${HTTP_FETCH}`;

/** Methods a script may use; CONNECT and TRACE are left out on purpose (tunnels, header echo). */
export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** The arguments as the prelude's `fetch` writes them: method upper case, header names lower case. */
export const FETCH_INPUT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    url: { type: "string", minLength: 1 },
    method: { type: "string", enum: [...HTTP_METHODS] },
    headers: { type: "object", additionalProperties: { type: "string" } },
    body: { type: "string" },
    credential: { type: "string", minLength: 1, maxLength: 64 },
  },
  required: ["url", "method", "headers"],
  additionalProperties: false,
};

/** What a request answers: the response, body as text. Any status is a result; only refusals and failures to reach the host are errors. */
export const FETCH_OUTPUT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    status: { type: "integer" },
    statusText: { type: "string" },
    url: { type: "string" },
    redirected: { type: "boolean" },
    headers: { type: "object", additionalProperties: { type: "string" } },
    body: { type: "string" },
  },
  required: ["status", "statusText", "url", "redirected", "headers", "body"],
  additionalProperties: false,
};

export const HTTP_FETCH_DESCRIPTION =
  "An HTTP request to an allowed host, made by the engine and journaled (replay never sends it again). " + "Scripts call it through `fetch`.";

/** Whether `tool` is the built-in `http.fetch`. */
export function isHttpFetch(tool: Pick<PinnedTool, "group" | "name" | "source">): boolean {
  return tool.source === "builtin" && tool.group === HTTP_GROUP && tool.name === HTTP_FETCH;
}
