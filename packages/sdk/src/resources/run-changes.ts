import type { RunStatus } from "@tapedeck/protocol";
import type { EventsLost, Run } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";
import { readSse } from "../sse-reader.js";
import { RECONNECT_DELAYS_MS, reconnectPause, retryable } from "./reconnect.js";

export interface RunChangesOptions {
  /** Runs in this state, or any of these. */
  readonly status?: RunStatus | readonly RunStatus[];
  /** Runs of this end user (within the client's scope). */
  readonly namespace?: string;
  /** Runs of this toolset. */
  readonly toolset?: string;
  /** Runs carrying every one of these labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Resume after this change (a `RunChange`'s `id`). Default: the changes from now on. */
  readonly after?: string;
  /** Stops the iteration (it then ends without an error). */
  readonly signal?: AbortSignal;
  /** Called each time the server has opened the stream (first, and after each reconnection): from then on no change is missed. */
  readonly onOpen?: () => void;
}

/** A run of the client's scope created or changed (its status, waits or output), at its state then. */
export interface RunChange {
  /** Where the change is in the stream: pass it as `after` to resume behind it. */
  readonly id: string;
  readonly run: Run;
}

/**
 * The live changes of the runs in the client's scope (`GET /v1/events`), in the order they
 * became durable on any node, for as long as the caller iterates. A dropped connection, a server
 * that stopped, or a `lost` notice (this client fell behind) is resumed with `Last-Event-ID`
 * from the last change yielded: a run that changed meanwhile comes once, at its latest state.
 * Throws a `TapedeckError` for an answer that retrying cannot change (400, 401), or once
 * reconnecting failed `RECONNECT_DELAYS_MS.length` times in a row.
 */
export async function* runChanges(http: HttpClient, options: RunChangesOptions = {}): AsyncGenerator<RunChange> {
  const query = changesQuery(options);
  let last = options.after;
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    try {
      const body = await http.stream("/v1/events", {
        query,
        ...(last === undefined ? {} : { lastEventId: last }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      // A resumed stream sends no `ready`: the server answered 200, it streams from `last` on.
      if (last !== undefined) options.onOpen?.();
      for await (const block of readSse(body)) {
        failures = 0;
        if (block.data === undefined) continue;
        if (block.event === "ready" && block.id !== undefined) {
          last = block.id;
          options.onOpen?.();
        } else if (block.event === "run" && block.id !== undefined) {
          const id = block.id;
          // Yielded before the position moves on: a consumer that stops here resumes with this change behind it.
          yield { id, run: JSON.parse(block.data) as Run };
          last = id;
        } else if (block.event === "lost") {
          const reloadFrom = (JSON.parse(block.data) as EventsLost).reloadFrom;
          if (reloadFrom !== undefined) last = reloadFrom;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      if (!retryable(error) || failures >= RECONNECT_DELAYS_MS.length - 1) throw error;
    }
    // Ended (the server stopped, or dropped this client): reconnect from the last change had.
    await reconnectPause(failures, options.signal);
    failures++;
  }
}

function changesQuery(options: RunChangesOptions): Record<string, string | readonly string[] | undefined> {
  const status = options.status === undefined ? undefined : typeof options.status === "string" ? [options.status] : options.status;
  const labels = Object.fromEntries(Object.entries(options.labels ?? {}).map(([key, value]) => [`label.${key}`, value]));
  return { ...labels, status, namespace: options.namespace, toolset: options.toolset };
}
