import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MODEL_APIS, type ModelApi } from "./model-apis.js";
import type { FakeRequest, ScriptedTurn } from "./model-turn.js";
import { type Answer, type FakeFailure, ScriptPlayer } from "./script-player.js";

/**
 * A loopback HTTP server that speaks one model API and plays the model's turns from a script,
 * so a test can drive an agent loop with the official client pointed at it by `baseURL`.
 * Error answers carry `x-should-retry: false`, which the official clients obey whatever their
 * `maxRetries`: a broken script fails the test at once instead of being retried.
 */
export interface ModelFake {
  /** `http://127.0.0.1:<port>`: an Anthropic client takes it as is, an OpenAI client with "/v1" appended. */
  readonly baseUrl: string;
  /** Every request whose body was a JSON object, in arrival order, refused ones included. */
  readonly requests: readonly FakeRequest[];
  /** Every refused request, in arrival order; a test that expects none asserts this is empty. */
  readonly errors: readonly FakeFailure[];
  /**
   * Resolves once the last turn has been answered (at once for an empty script). Rejects at the
   * first refusal before that, or at `close()` with turns unplayed. A refusal after the script
   * has finished (an extra request) shows only in `errors` and in the client's error.
   */
  readonly done: Promise<void>;
  /** Stops the server and drops its kept-alive connections. Never throws; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts a fake of `api` on a free loopback port that answers its requests with `turns`, in
 * order. Rejects only if the server cannot listen.
 */
export async function startModelFake(api: ModelApi, turns: readonly ScriptedTurn[]): Promise<ModelFake> {
  const player = new ScriptPlayer(MODEL_APIS[api], turns);
  const server = createServer((req, res) => void serve(player, req, res));
  const baseUrl = await listen(server);
  return {
    baseUrl,
    requests: player.requests,
    errors: player.errors,
    done: player.done,
    close: async () => {
      await closeServer(server);
      player.stop();
    },
  };
}

async function serve(player: ScriptPlayer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const text = await readText(req).catch(() => undefined);
  // The client went away mid-request (an aborted call): there is no one to answer or blame.
  if (text === undefined) {
    res.destroy();
    return;
  }
  const answer = await player.answer({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, text });
  send(res, answer);
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, answer: Answer): void {
  const noRetry = answer.status === 200 ? {} : { "x-should-retry": "false" };
  res.writeHead(answer.status, { "content-type": "application/json", ...noRetry });
  res.end(JSON.stringify(answer.body));
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // The callback gets an error only when the server is already closed: nothing left to do.
    server.close(() => resolve());
    // Clients keep connections alive; without this `close` waits for them to time out.
    server.closeAllConnections();
  });
}
