import type { RunEvent } from "@tapedeck/protocol";
import type { FireKind, FireState } from "../store/schedule-store.js";

/** What the engine tells its listeners (the server turns them into webhooks). */
export type EngineEvent =
  /** Something happened to a run (see `RunEvent`). */
  | RunEvent
  /** A schedule's fire was acted on here: its run started (`runId`), or it was skipped, buffered or failed (`reason`). */
  | {
      readonly type: "schedule.fired";
      readonly scheduleId: string;
      readonly fireAt: number;
      readonly kind: FireKind;
      readonly state: FireState;
      readonly runId?: string;
      readonly reason?: string;
    }
  /** The engine failed to do something in the background (waking runs); the runs are intact. */
  | { readonly type: "engine.error"; readonly error: unknown };

/** The engine's listeners: each hears every event; a listener that throws is its own fault. */
export class EngineListeners {
  readonly #listeners = new Set<(event: EngineEvent) => void>();

  /** Listens; returns a function that stops listening. */
  on(listener: (event: EngineEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's fault is its own; the engine goes on.
      }
    }
  }
}
