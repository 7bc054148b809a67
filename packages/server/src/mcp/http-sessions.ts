/**
 * The MCP sessions `/mcp` holds, bounded in number and expired when idle. Each is an MCP server
 * and its transport in memory (the runs it started are in the store and outlive it). A flood of
 * `initialize` requests gets a refusal once `max` sessions are open (or being opened), and the
 * server goes on serving the others; a session no request touched for `idleMs` (none in flight)
 * is closed, and its host's next request gets 404, after which the SDK's clients start a new one.
 */

/** Open sessions at most, by default: each holds an MCP server and a few kB; a host opens one per conversation. */
export const DEFAULT_MAX_MCP_SESSIONS = 1000;
/** A session unused this long is closed, by default (30 minutes): long enough for a person's pause, short enough to free a tab left open. */
export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpSessionLimits {
  /** Open sessions at most. */
  readonly maxSessions: number;
  /** How long a session with nothing in flight lives without a request, ms. */
  readonly idleMs: number;
}

/** What the registry needs of a session. */
export interface HeldSession {
  /** Ends the session (its transport and server); the registry has forgotten it by then. */
  close(): Promise<void>;
}

interface Entry<S> {
  readonly session: S;
  lastUsed: number;
  inFlight: number;
}

export class McpSessions<S extends HeldSession> {
  readonly #open = new Map<string, Entry<S>>();
  #opening = 0;

  constructor(
    readonly limits: McpSessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#open.size;
  }

  /**
   * Holds a place for a session about to open; false when `maxSessions` are open or opening
   * (after closing the idle ones). Each true is followed by `add` or `release`.
   */
  reserve(): boolean {
    if (this.#open.size + this.#opening >= this.limits.maxSessions) this.sweep();
    if (this.#open.size + this.#opening >= this.limits.maxSessions) return false;
    this.#opening++;
    return true;
  }

  /** Gives back a place `reserve` held, for a session that did not open. */
  release(): void {
    this.#opening = Math.max(0, this.#opening - 1);
  }

  /** A session that opened on a reserved place. */
  add(id: string, session: S): void {
    this.release();
    this.#open.set(id, { session, lastUsed: this.now(), inFlight: 0 });
  }

  get(id: string): S | undefined {
    return this.#open.get(id)?.session;
  }

  /** Marks a request on the session begun; the function returned marks it done (a stream held open counts as in flight until it closes). */
  begin(id: string): () => void {
    const entry = this.#open.get(id);
    if (entry === undefined) return () => {};
    entry.inFlight++;
    entry.lastUsed = this.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      entry.inFlight--;
      entry.lastUsed = this.now();
    };
  }

  /** Forgets a session that closed by itself (a DELETE, its transport closed). */
  forget(id: string): void {
    this.#open.delete(id);
  }

  /** Closes every session idle for `idleMs` or longer; answers how many. */
  sweep(): number {
    const now = this.now();
    let closed = 0;
    for (const [id, entry] of this.#open) {
      if (entry.inFlight === 0 && now - entry.lastUsed >= this.limits.idleMs) {
        this.#open.delete(id);
        void entry.session.close().catch(() => undefined);
        closed++;
      }
    }
    return closed;
  }

  /** Closes every session (the server stops). */
  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(all.map((entry) => entry.session.close().catch(() => undefined)));
  }
}
