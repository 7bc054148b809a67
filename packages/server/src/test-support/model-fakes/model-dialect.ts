import type { JsonObject, ModelTurn, ToolResultSeen } from "./model-turn.js";

/**
 * The seam between the fake's HTTP plumbing and one model API: where the API lives, what a
 * well-formed request looks like, and how a neutral turn, a tool result and an error are
 * spelled in that API's JSON. Implementations: `anthropic-messages.ts`, `openai-responses.ts`,
 * `openai-chat.ts`.
 */
export interface ModelDialect {
  /** The one route the fake answers, always with POST, e.g. `/v1/messages`. */
  readonly path: string;
  /** How the official client must be pointed at the fake; shown when a request misses `path`. */
  readonly baseUrlHint: string;
  /** What is wrong with a request body, or undefined when the API would accept it. */
  check(body: JsonObject): string | undefined;
  /** The API's response to a scripted turn. */
  reply(turn: ModelTurn, context: ReplyContext): JsonObject;
  /** Every tool result in a request body, in conversation order. */
  toolResults(body: JsonObject): ToolResultSeen[];
  /** The API's error body for a failure. */
  error(failure: FailureKind, message: string): JsonObject;
}

/** What a reply may depend on besides the turn. */
export interface ReplyContext {
  /** 1-based number of the turn being played; ids are derived from it so they are predictable. */
  turn: number;
  /** The request body, whose `model` (and for Responses, some settings) the reply echoes. */
  request: JsonObject;
}

/** Why the fake refused a request; each maps to one HTTP status. */
export type FailureKind =
  /** 400: the body is not what the API accepts (not JSON, missing fields, `stream: true`). */
  | "invalid_request"
  /** 404: the request missed the dialect's route, usually a wrong `baseURL`. */
  | "not_found"
  /** 500: the script failed: it ran out of turns, or a turn function threw. */
  | "script";

export const FAILURE_STATUS = { invalid_request: 400, not_found: 404, script: 500 } as const satisfies Record<FailureKind, number>;

/** The id of a turn's `index`-th tool call: the one the script gave, else `<prefix>_fake_<turn>_<n>`. */
export function scriptedCallId(prefix: string, context: ReplyContext, index: number, given: string | undefined): string {
  return given ?? `${prefix}_fake_${context.turn}_${index + 1}`;
}

/** Throws (a script failure) when `turn` uses what only OpenAI Responses has: a tool search, or a namespaced function call. */
export function refuseResponsesOnly(turn: ModelTurn, api: string): void {
  if ((turn.toolSearches?.length ?? 0) > 0) throw new Error(`${api} has no client tool search: a turn's toolSearches are for the openai-responses fake only`);
  const namespaced = turn.toolCalls?.find((c) => c.namespace !== undefined);
  if (namespaced) throw new Error(`${api} has no namespaces: the call of ${JSON.stringify(namespaced.name)} has one, which only openai-responses takes`);
}
