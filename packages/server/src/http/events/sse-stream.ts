import type { ServerResponse } from "node:http";
import { EVENT_BUFFER_BYTES, EVENT_HEARTBEAT_MS, EVENT_LOST_GRACE_MS } from "../limits.js";

/**
 * One Server-Sent Events response, with the bound that keeps a slow client from costing the
 * server memory: `send` says `behind` once more than `bufferBytes` wait in the response for the
 * client to read (the socket's kernel buffers are full), and the caller then ends it with `lost`.
 * A comment goes out every `heartbeatMs` of quiet. The stream ends when the client goes, when
 * `stop` aborts (the server stops), or when the caller ends it; `closed` aborts then.
 *
 * The response says `Connection: close`, so its socket is let go of when the stream ends (a
 * stream is never followed by another request on the same connection).
 */
export class SseStream {
  readonly #response: ServerResponse;
  readonly #bufferBytes: number;
  readonly #heartbeatMs: number;
  readonly #closed = new AbortController();
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(response: ServerResponse, stop: AbortSignal, options: { readonly bufferBytes?: number; readonly heartbeatMs?: number } = {}) {
    this.#response = response;
    this.#bufferBytes = options.bufferBytes ?? EVENT_BUFFER_BYTES;
    this.#heartbeatMs = options.heartbeatMs ?? EVENT_HEARTBEAT_MS;
    response.once("close", () => this.#close());
    if (stop.aborted) queueMicrotask(() => this.end());
    else stop.addEventListener("abort", () => this.end(), { once: true, signal: this.#closed.signal });
  }

  /** Aborted once the stream is over, whoever ended it. */
  get closed(): AbortSignal {
    return this.#closed.signal;
  }

  /** Sends the head (and the reconnection delay clients should use). */
  open(): void {
    this.#response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "close",
      // A buffering proxy (nginx) would hold the events back.
      "x-accel-buffering": "no",
    });
    this.#response.write("retry: 1000\n\n");
    this.#beat();
  }

  /** Writes one event; `behind` once the client left more than the bound unread (the event is written all the same). */
  send(event: string, data: unknown, id?: string | number): "sent" | "behind" | "closed" {
    if (this.#closed.signal.aborted) return "closed";
    const head = id === undefined ? "" : `id: ${id}\n`;
    this.#response.write(`${head}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    this.#beat();
    return this.#response.writableLength > this.#bufferBytes ? "behind" : "sent";
  }

  /** Moves the client's last event id on without an event (a browser's EventSource takes an `id:` line alone so). */
  sendId(id: string): void {
    if (this.#closed.signal.aborted) return;
    this.#response.write(`id: ${id}\n\n`);
    this.#beat();
  }

  /** Ends the stream: what was written is still delivered to a client that reads. */
  end(): void {
    if (this.#closed.signal.aborted) return;
    this.#response.end();
    this.#close();
  }

  /**
   * Ends a stream whose client fell behind, after `notice`: its socket is kept a while for the
   * client to read what was written, then let go of (a vanished client never reads it).
   */
  endBehind(notice: unknown): void {
    if (this.#closed.signal.aborted) return;
    this.#response.write(`event: lost\ndata: ${JSON.stringify(notice)}\n\n`);
    const socket = this.#response.socket;
    this.end();
    if (socket !== null && !this.#response.writableFinished) setTimeout(() => socket.destroy(), EVENT_LOST_GRACE_MS).unref();
  }

  #beat(): void {
    clearTimeout(this.#heartbeat);
    if (this.#closed.signal.aborted) return;
    this.#heartbeat = setTimeout(() => {
      if (this.#closed.signal.aborted) return;
      this.#response.write(": heartbeat\n\n");
      this.#beat();
    }, this.#heartbeatMs).unref();
  }

  #close(): void {
    clearTimeout(this.#heartbeat);
    this.#closed.abort();
  }
}
