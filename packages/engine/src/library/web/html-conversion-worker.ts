import { parentPort } from "node:worker_threads";
import type { ConversionRequest } from "./html-converter.js";
import type { ConversionReply } from "./html-conversion-pool.js";
import { htmlToMarkdown } from "./html-to-markdown.js";

/**
 * A conversion worker of `HtmlConversionPool`: one page at a time. An exception (a stack
 * overflow in turndown, a bug) is answered as a failure; the worker goes on. Running out of
 * memory ends the thread, which the pool reports.
 */
if (parentPort === null) throw new Error("html-conversion-worker.js runs only as a worker thread.");
const port = parentPort;
// Loaded (linkedom, turndown): a conversion's deadline starts now, not while the thread starts.
port.postMessage({ ready: true });

port.on("message", (message: { readonly id: number; readonly request: ConversionRequest }) => {
  let reply: ConversionReply;
  try {
    reply = { id: message.id, outcome: htmlToMarkdown(message.request) };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  port.postMessage(reply);
});
