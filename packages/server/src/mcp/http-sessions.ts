/**
 * The MCP sessions `/mcp` holds, bounded in number and expired when idle. Each is an MCP server
 * and its transport in memory (the runs it started are in the store and outlive it). A flood of
 * `initialize` requests gets a refusal once its owner (one key, or one end user's tokens) holds
 * `maxPerOwner` sessions, or `maxSessions` are open in all (or being opened), and the server goes
 * on serving the others: one tenant's flood leaves room for the other tenants' sessions; a session no request touched for `idleMs` (none in flight)
 * is closed, and its host's next request gets 404, after which the SDK's clients start a new one.
 */

/** Open sessions at most, by default: each holds an MCP server and a few kB; a host opens one per conversation. */
export const DEFAULT_MAX_MCP_SESSIONS = 1000;
/** Open sessions of one owner at most, by default: a person's hosts and conversations, not a flood. */
export const DEFAULT_MAX_MCP_SESSIONS_PER_OWNER = 100;
/** A session unused this long is closed, by default (30 minutes): long enough for a person's pause, short enough to free a tab left open. */
export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpSessionLimits {
  /** Open sessions at most. */
  readonly maxSessions: number;
  /** Open sessions of one owner at most. */
  readonly maxPerOwner: number;
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
  readonly owner: string;
  lastUsed: number;
  inFlight: number;
}

export class McpSessions<S extends HeldSession> {
  readonly #open = new Map<string, Entry<S>>();
  #opening = 0;
  /** Sessions open or opening, by owner. */
  readonly #owned = new Map<string, number>();

  constructor(
    readonly limits: McpSessionLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#open.size;
  }

  /**
   * Holds a place for a session of `owner` about to open: "owner" when the owner holds
   * `maxPerOwner`, "server" when `maxSessions` are open or opening (each after closing the idle
   * ones), else "ok". Each "ok" is followed by `add` or `release` with the same owner.
   */
  reserve(owner: string): "ok" | "owner" | "server" {
    if (this.#full(owner) !== undefined) this.sweep();
    const full = this.#full(owner);
    if (full !== undefined) return full;
    this.#opening++;
    this.#owned.set(owner, (this.#owned.get(owner) ?? 0) + 1);
    return "ok";
  }

  /** Gives back a place `reserve` held, for a session that did not open. */
  release(owner: string): void {
    this.#opening = Math.max(0, this.#opening - 1);
    this.#disown(owner);
  }

  /** A session that opened on a place reserved for `owner`. */
  add(id: string, owner: string, session: S): void {
    this.#opening = Math.max(0, this.#opening - 1);
    this.#open.set(id, { session, owner, lastUsed: this.now(), inFlight: 0 });
  }

  #full(owner: string): "owner" | "server" | undefined {
    if ((this.#owned.get(owner) ?? 0) >= this.limits.maxPerOwner) return "owner";
    if (this.#open.size + this.#opening >= this.limits.maxSessions) return "server";
    return undefined;
  }

  #disown(owner: string): void {
    const left = (this.#owned.get(owner) ?? 0) - 1;
    if (left > 0) this.#owned.set(owner, left);
    else this.#owned.delete(owner);
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
    const entry = this.#open.get(id);
    if (entry === undefined) return;
    this.#open.delete(id);
    this.#disown(entry.owner);
  }

  /** Closes every session idle for `idleMs` or longer; answers how many. */
  sweep(): number {
    const now = this.now();
    let closed = 0;
    for (const [id, entry] of this.#open) {
      if (entry.inFlight === 0 && now - entry.lastUsed >= this.limits.idleMs) {
        this.forget(id);
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
    this.#owned.clear();
    await Promise.all(all.map((entry) => entry.session.close().catch(() => undefined)));
  }
}
