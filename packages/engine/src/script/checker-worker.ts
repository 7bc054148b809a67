import { parentPort } from "node:worker_threads";
import { ScriptChecker } from "./checker.js";
import { compileScript } from "./compile.js";
import type { CheckerReply, CheckerRequest } from "./checker-pool.js";

/**
 * A type-checking worker: one `ScriptChecker` (its caches warm across checks) and the
 * transpiler, answering one request at a time. An exception is answered as an error; the
 * worker goes on.
 */
if (parentPort === null) throw new Error("checker-worker.js runs only as a worker thread.");
const port = parentPort;
const checker = new ScriptChecker();

port.on("message", (request: CheckerRequest) => {
  let reply: CheckerReply;
  try {
    reply =
      request.type === "check"
        ? { id: request.id, ok: true, value: checker.check(request.source, request.declarations, request.options) }
        : { id: request.id, ok: true, value: compileScript(request.source) };
  } catch (error) {
    reply = { id: request.id, ok: false, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  port.postMessage(reply);
});
