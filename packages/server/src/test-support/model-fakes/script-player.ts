import type { IncomingHttpHeaders } from "node:http";
import { FAILURE_STATUS, type FailureKind, type ModelDialect } from "./model-dialect.js";
import type { FakeRequest, JsonObject, ScriptedTurn } from "./model-turn.js";
import { isJsonObject } from "./wire-json.js";

/**
 * Plays a script of turns against incoming requests, in one model API's dialect, apart from
 * any HTTP plumbing.
 *
 * Invariants:
 * - every request gets exactly one answer, and `answer` never rejects;
 * - a request consumes a turn only if it is well-formed, and then exactly the next one;
 * - every refusal is pushed to `errors` and, until the script has finished, rejects `done`;
 * - `done` settles exactly once and never counts as an unhandled rejection.
 */

/** A request as it came off the wire, body still text. */
export interface IncomingRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  text: string;
}

/** What to send back. */
export interface Answer {
  status: number;
  body: JsonObject;
}

/** A request the fake refused, as the test sees it. */
export interface FakeFailure {
  /** The HTTP status the client got: 400 malformed, 404 wrong route, 500 script failure. */
  status: number;
  /** What went wrong; the client got the same text in the API's error body. */
  message: string;
  /** The request, when its body was a JSON object. */
  request?: FakeRequest;
  /** What a turn function threw. */
  cause?: unknown;
}

/** Longest piece of an unparseable body quoted back in an error. */
const QUOTED_BODY_CHARS = 200;

export class ScriptPlayer {
  readonly requests: FakeRequest[] = [];
  readonly errors: FakeFailure[] = [];
  readonly done: Promise<void>;
  #played = 0;
  #settled = false;
  #resolve: () => void = () => {};
  #reject: (error: Error) => void = () => {};

  constructor(
    private readonly dialect: ModelDialect,
    private readonly turns: readonly ScriptedTurn[],
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A test may rely on `errors` and never await `done`: its rejection must not be "unhandled".
    this.done.catch(() => {});
    if (turns.length === 0) this.#settle();
  }

  async answer(incoming: IncomingRequest): Promise<Answer> {
    try {
      return await this.#play(incoming);
    } catch (error) {
      return this.#fail("script", `the model fake itself failed: ${messageOf(error)}`, undefined, error);
    }
  }

  /** Called when the server closes: a script still playing can no longer finish. */
  stop(): void {
    const message = `the model fake was closed after ${this.#played} of ${this.turns.length} turns: the agent stopped calling the model before the script ended`;
    this.#settle(new Error(message));
  }

  async #play(incoming: IncomingRequest): Promise<Answer> {
    const { method, url } = incoming;
    if (method !== "POST" || new URL(url, "http://fake").pathname !== this.dialect.path) {
      return this.#fail("not_found", `the model fake answers only POST ${this.dialect.path}, not ${method} ${url}: ${this.dialect.baseUrlHint}`);
    }
    const body = parseObject(incoming.text);
    if (body === undefined) {
      return this.#fail("invalid_request", `the request body is not a JSON object: ${JSON.stringify(incoming.text.slice(0, QUOTED_BODY_CHARS))}`);
    }
    const request = this.#record(incoming, body);
    const problem = body.stream === true ? "`stream: true` is not supported by the model fake; call without streaming" : this.dialect.check(body);
    if (problem !== undefined) return this.#fail("invalid_request", `request #${request.seq} is malformed: ${problem}`, request);
    return this.#playTurn(request);
  }

  #record(incoming: IncomingRequest, body: JsonObject): FakeRequest {
    const { method, url, headers } = incoming;
    const request = { seq: this.requests.length + 1, method, url, headers, body, toolResults: this.dialect.toolResults(body) };
    this.requests.push(request);
    return request;
  }

  async #playTurn(request: FakeRequest): Promise<Answer> {
    const index = this.#played;
    const scripted = this.turns[index];
    if (scripted === undefined) return this.#fail("script", outOfTurns(this.turns.length, request), request);
    this.#played += 1;
    try {
      const turn = typeof scripted === "function" ? await scripted(request) : scripted;
      const answer = { status: 200, body: this.dialect.reply(turn, { turn: index + 1, request: request.body }) };
      if (this.#played === this.turns.length) this.#settle();
      return answer;
    } catch (error) {
      return this.#fail("script", `turn ${index + 1} of the script threw on request #${request.seq}: ${messageOf(error)}`, request, error);
    }
  }

  #fail(kind: FailureKind, message: string, request?: FakeRequest, cause?: unknown): Answer {
    const status = FAILURE_STATUS[kind];
    this.errors.push({ status, message, ...(request && { request }), ...(cause !== undefined && { cause }) });
    this.#settle(new Error(`model fake answered ${status}: ${message}`, { cause }));
    return { status, body: this.dialect.error(kind, message) };
  }

  #settle(error?: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    if (error) this.#reject(error);
    else this.#resolve();
  }
}

function outOfTurns(count: number, request: FakeRequest): string {
  const results = JSON.stringify(request.toolResults).slice(0, QUOTED_BODY_CHARS);
  return `the script ran out: all ${count} turns are played and request #${request.seq} asked for another (tool results it carried: ${results}). Add a turn, or find why the agent called the model again.`;
}

function parseObject(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
