/**
 * What the engine tells a process's metrics (`/metrics` in the server): each call that ended,
 * and each journal commit. Process-wide, like the metrics they feed: a listener hears every engine
 * of the process. With no listener (the engine used as a library), each notice is one size check.
 */

/** A call the dispatcher is done with: how it ended and how long it took, attempts included. */
export interface CallEnded {
  /** The tool's source (`mcp`, `http`, `host`, `user`, `library`, …). */
  readonly source: string;
  /** `group.name`, as the script calls it. */
  readonly tool: string;
  readonly outcome: "ok" | "error" | "parked";
  readonly seconds: number;
}

export interface EngineObserver {
  callEnded?(call: CallEnded): void;
  /** A batch of a run's journal became durable, `seconds` after it was handed to the store. */
  committed?(seconds: number): void;
}

const observers = new Set<EngineObserver>();

/** Listens to every engine of the process; returns a function that stops listening. */
export function observeEngines(observer: EngineObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** Whether anyone listens: a notice is built only then. */
export function observed(): boolean {
  return observers.size > 0;
}

export function noteCallEnded(call: CallEnded): void {
  for (const observer of observers) observer.callEnded?.(call);
}

export function noteCommitted(seconds: number): void {
  for (const observer of observers) observer.committed?.(seconds);
}
