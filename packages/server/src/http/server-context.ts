import type { Engine, Store } from "@tapedeck/engine";
import { ApiError } from "./api-error.js";
import type { TokenSigner } from "./auth/tokens.js";

/**
 * What the routes share. The engine opens after the server listens (run-bound webhook URLs
 * must carry the address it got), so it is reached through `engine()`, which answers 503
 * until then and once the server is stopping.
 */
export class ServerContext {
  readonly store: Store;
  readonly tokens: TokenSigner;
  readonly now: () => number;
  readonly #stopping = new AbortController();
  #engine: Engine | undefined;

  constructor(store: Store, tokens: TokenSigner, now: () => number = Date.now) {
    this.store = store;
    this.tokens = tokens;
    this.now = now;
  }

  /** Aborted when the server starts stopping: requests holding for a run answer at once. */
  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  get ready(): boolean {
    return this.#engine !== undefined && !this.#stopping.signal.aborted;
  }

  engine(): Engine {
    if (this.#stopping.signal.aborted) throw new ApiError("unavailable", "The server is stopping; retry against its next start.");
    if (!this.#engine) throw new ApiError("unavailable", "The server is starting; retry in a moment (GET /ready answers 200 once it can take requests).");
    return this.#engine;
  }

  attach(engine: Engine): void {
    this.#engine = engine;
  }

  stop(): void {
    this.#stopping.abort();
  }
}
