/** An append did not continue the journal where it ends (or took a signal already taken): another writer got there first. */
export class StoreConflictError extends Error {
  readonly code: "store_conflict" | "lease_lost" = "store_conflict";
  constructor(message: string) {
    super(message);
    this.name = "StoreConflictError";
  }
}
