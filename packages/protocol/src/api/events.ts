import type { JournalEntry, RunStatus } from "../run.js";
import { LABELS } from "./limits.js";
import { namespace } from "./labels.js";
import { runStatus, type Run } from "./runs.js";
import { schemaFor } from "./schema-for.js";

/**
 * The live event streams, as Server-Sent Events: a run's (`GET /v1/runs/:id/events`) and the
 * runs of the caller's scope (`GET /v1/events`). Each event's `data` is one line of JSON. An
 * event with an `id` can be resumed after: a client that reconnects with `Last-Event-ID` gets
 * every event after it, none twice. See `docs/design/events.md`.
 */

/** The query string of `GET /v1/runs/:id/events`. */
export interface RunEventsQuery {
  /** Start after the entry with this index (the `Last-Event-ID` header, when sent, wins). Default: from the journal's first entry. */
  readonly after?: number;
}

export const runEventsQuery = schemaFor<RunEventsQuery>()({
  type: "object",
  properties: { after: { type: "integer", minimum: -1, description: "The index of the last entry the client has; -1 or absent: from the first." } },
  additionalProperties: false,
});

/** The query string of `GET /v1/events`. */
export interface EventsQuery {
  /** Runs in any of these states (repeat `status` for several). */
  readonly status?: RunStatus[];
  readonly namespace?: string;
  /** Runs of this toolset. */
  readonly toolset?: string;
  /** `label.<key>=<value>`: only runs carrying every one of these labels. */
  readonly [label: `label.${string}`]: string;
}

export const eventsQuery = schemaFor<EventsQuery>()({
  type: "object",
  properties: { status: { type: "array", items: runStatus }, namespace, toolset: { type: "string", maxLength: 200 } },
  patternProperties: { "^label\\..+$": { type: "string", maxLength: LABELS.maxValueLength } },
  additionalProperties: false,
});

/**
 * The events of a run's stream, by their SSE `event` name:
 * - `run` (no id): the run as `GET /v1/runs/:id` answers it, first on every connection and
 *   again whenever its status, waits or output change;
 * - `entry` (id: the entry's index): a journal entry, in order;
 * - `end` (no id): the run ended and every entry was sent; the stream closes;
 * - `lost` (no id): the client fell behind (`reloadFrom`: the last index sent); the stream closes.
 */
export type RunStreamEvent =
  | { readonly event: "run"; readonly data: Run }
  | { readonly event: "entry"; readonly id: number; readonly data: JournalEntry }
  | { readonly event: "end"; readonly data: Run }
  | { readonly event: "lost"; readonly data: EventsLost };

/**
 * The events of `GET /v1/events`:
 * - `ready` (id: where the stream starts): first on a connection without `Last-Event-ID`;
 * - `run` (id: the change's position, opaque): a run of the scope was created or changed (its
 *   status, waits, output), at its state then; runs that changed several times while a client was
 *   away come once each, at their latest state;
 * - `lost` (no id): the client fell behind; the stream closes.
 */
export type ChangeStreamEvent =
  | { readonly event: "ready"; readonly id: string; readonly data: Record<string, never> }
  | { readonly event: "run"; readonly id: string; readonly data: Run }
  | { readonly event: "lost"; readonly data: EventsLost };

/** The `lost` event: the server dropped this client, whose buffer was full; reconnect with `Last-Event-ID: <reloadFrom>`. */
export interface EventsLost {
  readonly message: string;
  /** The id of the last event sent before it (absent: none was), to resume after. */
  readonly reloadFrom?: string;
}
