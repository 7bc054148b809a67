/**
 * State one fixture shares across all its MCP sessions: the effects ledger and the edits made to
 * the tool list. An HTTP fixture runs one `McpServer` per session, and a reconnecting client gets
 * a new session, so a retried call must meet the same ledger and the same tool list.
 *
 * Invariants: an effect runs at most once per idempotency key (calls without a key always run);
 * every session's tool list is the base list minus `removed` plus `added`.
 */

/** The idempotency key Tapedeck puts in a call's `_meta`. */
export const IDEMPOTENCY_META_KEY = "dev.tapedeck/idempotency-key";

/** Everything seen for one idempotency key. */
export interface KeyRecord {
  readonly key: string;
  /** The `op` of the first call, the one whose effect ran. */
  readonly op: string;
  /** Calls received with this key, the first included. */
  attempts: number;
  /** The `traceparent` of each call, in order (null when a call had none). */
  readonly traceparents: (string | null)[];
}

/** What `effects` answers. */
export interface EffectOutcome {
  /** Effects performed so far, across all keys and unkeyed calls. */
  readonly count: number;
  readonly key: string | null;
  readonly traceparent: string | null;
  /** Calls received with this key (1 for an unkeyed call). */
  readonly attemptsForKey: number;
}

/** A tool `add_tool` added: it requires the string arguments `requires` besides `text`, and answers (an echo) unless `hang`. */
export interface AddedTool {
  readonly requires: readonly string[];
  readonly hang: boolean;
}

/** A change to the tool list; `origin` is the server whose tool call made it. */
export type ToolListListener = (origin: object) => void;

export class FixtureState {
  /** Effects performed. */
  private effectCount = 0;
  private unkeyed = 0;
  private readonly keys = new Map<string, KeyRecord>();
  /** Tools added by `add_tool`. */
  readonly added = new Map<string, AddedTool>();
  /** Tools removed by `remove_tool` (base tools or added ones). */
  readonly removed = new Set<string>();
  private readonly listeners = new Set<ToolListListener>();

  /** Records a call of `effects`; performs its effect unless its key was seen before. */
  recordEffect(op: string, key: string | null, traceparent: string | null): EffectOutcome {
    if (key === null) {
      this.unkeyed += 1;
      this.effectCount += 1;
      return { count: this.effectCount, key, traceparent, attemptsForKey: 1 };
    }
    let record = this.keys.get(key);
    if (record === undefined) {
      this.effectCount += 1;
      record = { key, op, attempts: 0, traceparents: [] };
      this.keys.set(key, record);
    }
    record.attempts += 1;
    record.traceparents.push(traceparent);
    return { count: this.effectCount, key, traceparent, attemptsForKey: record.attempts };
  }

  /** Everything `effects` recorded, keys in first-seen order. */
  effectsLog(): { count: number; unkeyed: number; keys: KeyRecord[] } {
    return { count: this.effectCount, unkeyed: this.unkeyed, keys: [...this.keys.values()] };
  }

  /** Adds tool `name`; false when a tool of that name is listed already. */
  addTool(name: string, isBase: (name: string) => boolean, origin: object, added: AddedTool = { requires: [], hang: false }): boolean {
    if (this.added.has(name) || (isBase(name) && !this.removed.has(name))) return false;
    this.removed.delete(name);
    this.added.set(name, added);
    this.emit(origin);
    return true;
  }

  /** Removes tool `name`; false when no tool of that name is listed. */
  removeTool(name: string, isBase: (name: string) => boolean, origin: object): boolean {
    const listed = this.added.has(name) || (isBase(name) && !this.removed.has(name));
    if (!listed) return false;
    this.added.delete(name);
    this.removed.add(name);
    this.emit(origin);
    return true;
  }

  /** Calls `listener` after every tool-list change; returns the unsubscribe function. */
  onToolListChanged(listener: ToolListListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(origin: object): void {
    for (const listener of this.listeners) listener(origin);
  }
}
