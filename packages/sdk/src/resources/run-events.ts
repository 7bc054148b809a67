import type { EventsLost, Run, RunStreamEvent } from "@tapedeck/protocol/api";
import type { JournalEntry } from "@tapedeck/protocol";
import type { HttpClient } from "../http-client.js";
import { readSse } from "../sse-reader.js";
import { RECONNECT_DELAYS_MS, reconnectPause, retryable } from "./reconnect.js";

/** What `runs.events` yields: the stream's events but `lost`, which it handles itself (it reconnects from where it was). */
export type RunStreamItem = Exclude<RunStreamEvent, { readonly event: "lost" }>;

export interface RunEventsOptions {
  /** Start after the entry with this index. Default: from the journal's first entry. */
  readonly after?: number;
  /** Stops the iteration (it then ends without an error). */
  readonly signal?: AbortSignal;
}

/**
 * A run's live events (`GET /v1/runs/:id/events`): its `run` state, its journal entries in order
 * and `end`, after which the iteration ends. A dropped connection, a server that stopped, or a
 * `lost` notice (this client fell behind) is resumed with `Last-Event-ID` from the last entry
 * yielded: no entry is skipped or yielded twice. Throws a `TapedeckError` for an answer that
 * retrying cannot change (404: a run missing or outside the client's scope; 401), or once
 * reconnecting failed `RECONNECT_DELAYS_MS.length` times in a row.
 */
export async function* runEvents(http: HttpClient, path: string, options: RunEventsOptions = {}): AsyncGenerator<RunStreamItem> {
  let last = options.after;
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    try {
      const body = await http.stream(path, {
        ...(last === undefined ? {} : { lastEventId: String(last) }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const block of readSse(body)) {
        failures = 0;
        if (block.data === undefined) continue;
        const data = JSON.parse(block.data) as unknown;
        if (block.event === "entry") {
          const entry = data as JournalEntry;
          // Yielded before the index moves on: a consumer that stops here resumes with this entry behind it.
          yield { event: "entry", id: entry.index, data: entry };
          last = entry.index;
        } else if (block.event === "run") yield { event: "run", data: data as Run };
        else if (block.event === "end") {
          yield { event: "end", data: data as Run };
          return;
        } else if (block.event === "lost") {
          const reloadFrom = (data as EventsLost).reloadFrom;
          if (reloadFrom !== undefined) last = Math.max(last ?? -1, Number(reloadFrom));
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      if (!retryable(error) || failures >= RECONNECT_DELAYS_MS.length - 1) throw error;
    }
    // Ended without `end` (the server stopped, or dropped this client): reconnect.
    await reconnectPause(failures, options.signal);
    failures++;
  }
}
