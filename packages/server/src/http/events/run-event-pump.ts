import type { Engine, Notifier, RunRecord } from "@tapedeck/engine";
import { runJournalTopic } from "@tapedeck/engine";
import { terminalStatuses } from "@tapedeck/protocol";
import type { Run } from "@tapedeck/protocol/api";
import type { ServerLogger } from "../../logging/server-logger.js";
import { EVENT_PAGE } from "../limits.js";
import { runView } from "../run-view.js";
import { SerialWake } from "./serial-wake.js";
import type { SseStream } from "./sse-stream.js";

/**
 * Feeds one run's event stream from the store: its journal entries after the client's last one,
 * in order, each with its index as the event id, and the run itself when it changes; `end` once
 * the run ended and its last entry went out. It reads when the store says the run changed
 * (`runJournalTopic`, on every node) and at the notifier's poll, one page at a time, so what it
 * holds is a page and what the stream buffers (`SseStream`): the engine never waits for it.
 *
 * Invariants: entries go out in index order, each once per connection (`#next` only moves
 * forward); a resumed connection starts after its `Last-Event-ID`, so across connections none is
 * lost and none repeated. A client that falls behind gets `lost` with the last index sent.
 */
export class RunEventPump {
  readonly #engine: Engine;
  readonly #stream: SseStream;
  readonly #runId: string;
  readonly #log: ServerLogger;
  #next: number;
  #lastRun: string | undefined;

  constructor(engine: Engine, stream: SseStream, run: RunRecord, after: number, log: ServerLogger) {
    this.#engine = engine;
    this.#stream = stream;
    this.#runId = run.id;
    this.#next = after + 1;
    this.#log = log;
  }

  /** Starts feeding; stops by itself when the stream closes. */
  start(notifier: Notifier): void {
    const wake = new SerialWake(
      () => this.#step(),
      (error) => {
        // The store failed a read (or the run was purged): the client reconnects and resumes.
        this.#log.warn({ err: error, run: this.#runId }, "a run's event stream could not read the store; it was closed for its client to resume");
        this.#stream.end();
      },
    );
    const stop = notifier.subscribe(runJournalTopic(this.#runId), () => wake.wake());
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
    if (this.#stream.closed.aborted) return;
    // Read before the entries: once it says the run ended, its journal is complete up to `journalLength`.
    const record = await this.#engine.getRun(this.#runId);
    const run = runView(record);
    if (this.#lastRun === undefined) this.#sendRun(run);
    for (;;) {
      const entries = await this.#engine.journal(this.#runId, this.#next, EVENT_PAGE);
      for (const entry of entries) {
        const sent = this.#stream.send("entry", entry, entry.index);
        if (sent === "closed") return;
        this.#next = entry.index + 1;
        if (sent === "behind") return this.#fellBehind();
      }
      if (entries.length < EVENT_PAGE) break;
    }
    this.#sendRun(run);
    if (terminalStatuses.includes(record.status) && this.#next >= record.journalLength) {
      this.#stream.send("end", run);
      this.#stream.end();
    }
  }

  /** Sends the run if it changed since the last one sent (what the client sees of it: status, waits, output, error). */
  #sendRun(run: Run): void {
    const seen = JSON.stringify([run.status, run.waits, run.output, run.error, run.updatedAt]);
    if (seen === this.#lastRun) return;
    this.#lastRun = seen;
    if (this.#stream.send("run", run) === "behind") this.#fellBehind();
  }

  #fellBehind(): void {
    const reloadFrom = this.#next - 1;
    this.#log.warn({ run: this.#runId, reloadFrom }, "a run's event stream dropped a client that fell behind");
    this.#stream.endBehind({
      message: `Events lost: this client fell behind and the server stopped buffering for it. Reload from entry ${reloadFrom} (reconnect with Last-Event-ID: ${reloadFrom}).`,
      ...(reloadFrom < 0 ? {} : { reloadFrom: String(reloadFrom) }),
    });
  }
}
