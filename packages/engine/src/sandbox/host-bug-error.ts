/**
 * A request the engine should never have made: a second `start`, a delivery for a seq that was
 * already settled or never issued. The worker answers it as an error and stays healthy; any
 * other exception in a worker is fatal to that worker (its WASM module may be corrupt).
 */
export class HostBugError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostBugError";
  }
}
