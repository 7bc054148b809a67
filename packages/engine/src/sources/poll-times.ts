import type { Clock } from "../clock.js";

/**
 * When workers last polled, so a call that no poll takes at once can say how long no worker
 * that could take it has polled: "waiting for a worker to serve `crm.lookup_customer` (no worker
 * has polled for 312 s)".
 *
 * Invariants:
 * - One entry per kind of poll (`key`: a worker polls with the same tools, scope and toolset
 *   each time), at most `POLL_KINDS`: a flood of odd polls forgets the oldest, never grows memory.
 * - A held poll counts as polling until it ends (`record`'s function, called then).
 * - With no poll on record, the last poll is when this began to watch: nothing is claimed
 *   that was not seen.
 */

/** Kinds of poll remembered: far more than the workers one server sees. */
const POLL_KINDS = 256;

interface PollKind<W> {
  /** Who polled: what decides which calls the poll could take (a scope, a toolset). */
  readonly who: W;
  readonly matches: (tool: string) => boolean;
  at: number;
}

export class PollTimes<W> {
  readonly #kinds = new Map<string, PollKind<W>>();
  readonly #since: number;

  constructor(private readonly clock: Clock) {
    this.#since = clock.now();
  }

  /** A poll of kind `key` now; the function returned says it is still polling (when a held poll ends). */
  record(key: string, who: W, matches: (tool: string) => boolean): () => void {
    const kind = this.#kinds.get(key) ?? { who, matches, at: 0 };
    kind.at = this.clock.now();
    // Re-inserted as the newest: the oldest kind is the one forgotten past the bound.
    this.#kinds.delete(key);
    this.#kinds.set(key, kind);
    if (this.#kinds.size > POLL_KINDS) this.#kinds.delete(this.#kinds.keys().next().value!);
    return () => {
      kind.at = Math.max(kind.at, this.clock.now());
    };
  }

  /** When a poll that could take a call of `tool` (and that `could` accepts) last polled, or when this began. */
  last(tool: string, could: (who: W) => boolean = () => true): number {
    let last = this.#since;
    for (const kind of this.#kinds.values()) if (kind.at > last && kind.matches(tool) && could(kind.who)) last = kind.at;
    return last;
  }
}
