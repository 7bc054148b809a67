import type { RunRecord, Store } from "@tapedeck/engine";
import { RUN_CHANGES_TOPIC } from "@tapedeck/engine";
import type { RunStatus } from "@tapedeck/protocol";
import type { ServerLogger } from "../../logging/server-logger.js";
import { sees, type Scope } from "../../tenancy/scope.js";
import { EVENT_PAGE } from "../limits.js";
import { runView } from "../run-view.js";
import { SerialWake } from "./serial-wake.js";
import type { SseStream } from "./sse-stream.js";

/** Which changed runs a stream of `GET /v1/events` sends: the caller's scope narrowed by the query (`narrow`), and these. */
export interface ChangeFilter {
  readonly scope: Scope;
  readonly status?: readonly RunStatus[];
  readonly toolset?: string;
}

/**
 * Feeds a stream of `GET /v1/events` from the store's change order (`Store.changedRuns`): each
 * run of the filter that was created or changed after the client's cursor, at its state now, with
 * its change's cursor as the event id. It reads when a run changes on any node
 * (`RUN_CHANGES_TOPIC`) and at the notifier's poll, a page at a time, so the engine never waits
 * for it. Runs outside the filter are read and skipped: the last cursor of a page that ends with
 * them goes out alone (an `id:` line without data), so a client that reconnects does not read
 * them again. A client that falls behind gets `lost` with the last cursor sent.
 */
export class ChangePump {
  readonly #store: Store;
  readonly #stream: SseStream;
  readonly #filter: ChangeFilter;
  readonly #log: ServerLogger;
  #cursor: string;
  #sent: string | undefined;

  constructor(store: Store, stream: SseStream, filter: ChangeFilter, after: string, log: ServerLogger) {
    this.#store = store;
    this.#stream = stream;
    this.#filter = filter;
    this.#cursor = after;
    this.#log = log;
  }

  /** Starts feeding; stops by itself when the stream closes. */
  start(): void {
    const wake = new SerialWake(
      () => this.#step(),
      (error) => {
        this.#log.warn({ err: error }, "an event stream could not read the store; it was closed for its client to resume");
        this.#stream.end();
      },
    );
    const stop = this.#store.notifier.subscribe(RUN_CHANGES_TOPIC, () => wake.wake());
    this.#stream.closed.addEventListener(
      "abort",
      () => {
        stop();
        wake.stop();
      },
      { once: true },
    );
    wake.wake();
  }

  async #step(): Promise<void> {
    for (;;) {
      if (this.#stream.closed.aborted) return;
      const changes = (await this.#store.changedRuns(this.#cursor, EVENT_PAGE)) ?? [];
      for (const { cursor, run } of changes) {
        this.#cursor = cursor;
        if (!this.#wants(run)) continue;
        const sent = this.#stream.send("run", runView(run), cursor);
        if (sent === "closed") return;
        this.#sent = cursor;
        if (sent === "behind") return this.#fellBehind();
      }
      if (changes.length > 0 && this.#sent !== this.#cursor) {
        this.#stream.sendId(this.#cursor);
        this.#sent = this.#cursor;
      }
      if (changes.length < EVENT_PAGE) return;
    }
  }

  #wants(run: RunRecord): boolean {
    const { scope, status, toolset } = this.#filter;
    if (!sees(scope, run)) return false;
    if (status !== undefined && !status.includes(run.status)) return false;
    return toolset === undefined || run.toolsetId === toolset;
  }

  #fellBehind(): void {
    this.#log.warn({ reloadFrom: this.#sent }, "an event stream dropped a client that fell behind");
    this.#stream.endBehind({
      message: `Events lost: this client fell behind and the server stopped buffering for it. Reload the runs, then reconnect with Last-Event-ID: ${this.#sent ?? ""} to read on.`,
      ...(this.#sent === undefined ? {} : { reloadFrom: this.#sent }),
    });
  }
}
