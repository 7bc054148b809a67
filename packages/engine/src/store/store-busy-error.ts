/**
 * A write the database gave up because it crossed other transactions (a deadlock, a
 * serialization failure) every time it was tried: nothing of it was written, and trying it
 * again later is safe. Not a fault of the host executing a run: the run is released and taken
 * again after a backoff, without counting it against the run.
 */
export class StoreBusyError extends Error {
  readonly code = "store_busy";
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = "StoreBusyError";
  }
}
