import { TapedeckError } from "../errors.js";

/**
 * Waits before each reconnection in a row of a live stream that failed to get an event (the
 * server restarting, a network gone): about 8 s in all, enough for a node's restart or a load
 * balancer's failover; past them the last failure is thrown.
 */
export const RECONNECT_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000] as const;

/** A failure another connection may not have: the network, a server stopping or starting, a body cut short. */
export function retryable(error: unknown): boolean {
  if (!TapedeckError.is(error)) return true;
  return error.status === 0 || error.status === 503 || error.status === 502 || error.status === 504;
}

/** The pause before reconnection number `failures` (0: at once); ends early when `signal` aborts. */
export function reconnectPause(failures: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = RECONNECT_DELAYS_MS[Math.min(failures, RECONNECT_DELAYS_MS.length - 1)]!;
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
