/**
 * Where spilled results live (`spill.ts`): the whole text of a result that was too large to
 * show, under a handle, readable only from the session that made it — the store keys every blob
 * by its session, so a handle copied into another session finds nothing.
 *
 * Durability: a resolved `put` is committed. `put` of a handle already stored is a no-op (the
 * handle is a hash of the session and the text: the same result spilled twice is one blob).
 */
export interface BlobStore {
  put(session: string, handle: string, text: string): Promise<void>;
  /** The text of `handle` in `session`; `undefined` when that session has no such blob. */
  get(session: string, handle: string): Promise<string | undefined>;
  /** Deletes `handle` of `session` (a no-op when there is none); resolved: committed. */
  delete(session: string, handle: string): Promise<void>;
  /** Deletes every blob of `session` (the session ended or expired); resolves with how many. */
  deleteSession(session: string): Promise<number>;
}

/** Blobs in memory: for tests and embedded use without a data folder. */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, Map<string, string>>();

  put(session: string, handle: string, text: string): Promise<void> {
    const blobs = this.#blobs.get(session) ?? new Map<string, string>();
    if (!blobs.has(handle)) blobs.set(handle, text);
    this.#blobs.set(session, blobs);
    return Promise.resolve();
  }

  get(session: string, handle: string): Promise<string | undefined> {
    return Promise.resolve(this.#blobs.get(session)?.get(handle));
  }

  delete(session: string, handle: string): Promise<void> {
    this.#blobs.get(session)?.delete(handle);
    return Promise.resolve();
  }

  deleteSession(session: string): Promise<number> {
    const count = this.#blobs.get(session)?.size ?? 0;
    this.#blobs.delete(session);
    return Promise.resolve(count);
  }
}
