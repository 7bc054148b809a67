import type { JsonValue } from "@tapedeck/protocol";

/**
 * The signals sub-store: signals sent to runs, kept until a `signal()` call of the run takes
 * them. Taking one is part of the run's append (`RunPatch.consumeSignals`), so a signal is
 * consumed in the very commit that journals the outcome it gave. Contract:
 * `contracts/signal-store-contract.ts`.
 */
export interface SignalStore {
  /**
   * Keeps a signal for a run until a `signal()` call takes it. With a `key` already used for
   * this run, nothing is written and the first signal's id is returned (`duplicate`).
   */
  putSignal(signal: NewSignal): Promise<{ readonly id: number; readonly duplicate: boolean }>;
  /** A run's signals of this name that no call has taken yet, oldest first. */
  pendingSignals(runId: string, name: string): Promise<StoredSignal[]>;
  /** The id of the signal kept for the run with this key (taken or not), if any: a resumed sender's question "did I send it?". */
  signalByKey(runId: string, key: string): Promise<number | undefined>;
}

export interface NewSignal {
  readonly runId: string;
  readonly name: string;
  readonly payload: JsonValue;
  readonly at: number;
  /** Makes sending the same signal twice deliver it once (e.g. a model's tool call id). */
  readonly key?: string;
}

export interface StoredSignal {
  readonly id: number;
  readonly name: string;
  readonly payload: JsonValue;
  readonly at: number;
}
