import { isSessionId, type Store } from "@tapedeck/engine";
import { ApiError } from "../http/api-error.js";
import type { Caller } from "../http/auth/caller.js";

/**
 * Quotas on starting runs, per namespace (end user) and per API key: runs in progress at once,
 * runs started per minute and per day. Checked when a run is started or forked, before anything
 * is written; over one, the start is refused with 429 `quota_exceeded` and `Retry-After`.
 *
 * Invariants:
 * - The per-minute and per-day counts are the store's sliding windows (`RateLimitStore.take`):
 *   shared by every node on the store, exact, and a refused start takes no place. The key's
 *   windows are taken first, then the namespace's: a start refused by its namespace has taken a
 *   place of its key (it errs toward fewer starts, never more).
 * - Runs in progress (`queued`, `running`, `waiting`, direct sessions apart) are counted in the
 *   store at the start: two starts racing on two nodes may both pass at the limit (a bound for a
 *   runaway client, not a lock).
 * - A start with an idempotency key that names a run already is not counted: it starts nothing.
 */

/** The quotas of one namespace or one key; each left out is no limit. */
export interface QuotaLimits {
  /** Runs in progress at once (queued, running or waiting). */
  readonly concurrentRuns?: number;
  /** Runs started in any sliding minute. */
  readonly runsPerMinute?: number;
  /** Runs started in any sliding 24 hours. */
  readonly runsPerDay?: number;
  /**
   * Namespaces only: tool calls in any sliding minute, across the end user's runs and direct
   * sessions (the engine's `limits.namespaceCallsPerMinute`). Past it a call fails
   * `rate_limited` (retryable, with `retryAfterMs`), unsent.
   */
  readonly callsPerMinute?: number;
}

/** The server's quotas (`ServeOptions.quotas`): every namespace's, and every API key's. */
export interface Quotas {
  readonly perNamespace?: QuotaLimits;
  readonly perKey?: QuotaLimits;
}

/** How long a client over its concurrency quota is told to wait: a run's end cannot be foreseen, so a short poll. */
export const CONCURRENCY_RETRY_AFTER_S = 5;

const MINUTE = 60_000;
const DAY = 86_400_000;

/** What is wrong with quotas as given (empty when nothing is), each naming its field. */
export function quotaProblems(quotas: Quotas): string[] {
  const problems: string[] = [];
  for (const [scope, limits] of Object.entries(quotas) as [string, QuotaLimits | undefined][]) {
    if (scope !== "perNamespace" && scope !== "perKey") problems.push(`quotas has an unknown key "${scope}"; allowed keys: perNamespace, perKey`);
    for (const [field, value] of Object.entries(limits ?? {})) {
      if (field === "callsPerMinute" && scope === "perKey")
        problems.push(`quotas.perKey.callsPerMinute: calls are counted per namespace only (a run does not know the key that started it)`);
      else if (!QUOTA_FIELDS.includes(field)) problems.push(`quotas.${scope} has an unknown key "${field}"; allowed keys: ${QUOTA_FIELDS.join(", ")}`);
      else if (!(typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 100_000))
        problems.push(`quotas.${scope}.${field}: ${JSON.stringify(value)} is not a whole number from 1 to 100000`);
    }
  }
  return problems;
}

const QUOTA_FIELDS = ["concurrentRuns", "runsPerMinute", "runsPerDay", "callsPerMinute"];

export class RunQuotas {
  constructor(
    private readonly quotas: Quotas,
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  /** Whether any quota is set: with none, starts cost no read. */
  get active(): boolean {
    return Object.keys(this.quotas.perKey ?? {}).length > 0 || Object.keys(this.quotas.perNamespace ?? {}).length > 0;
  }

  /** Refuses (429) a start by `caller` in `namespace` over a quota; a start that takes a place in a window keeps it. */
  async admitStart(caller: Caller, namespace: string | undefined, idempotencyKey: string | undefined): Promise<void> {
    if (!this.active) return;
    const ns0 = this.quotas.perNamespace;
    // Only a quota of calls (the engine's to count): starts cost no read.
    if (this.quotas.perKey === undefined && ns0 !== undefined && Object.keys(ns0).every((field) => field === "callsPerMinute")) return;
    if (idempotencyKey !== undefined && (await this.store.getRunByIdempotencyKey(idempotencyKey, namespace)) !== undefined) return;
    const key = this.quotas.perKey;
    // The embedded application's own channel is the operator itself, never limited.
    const keyed = key !== undefined && caller.keyId !== "in-process";
    const ns = namespace === undefined || namespace === "" ? undefined : this.quotas.perNamespace;
    if (ns?.concurrentRuns !== undefined) await this.#concurrency(namespace!, ns.concurrentRuns);
    if (keyed) await this.#windows(`quota/key/${caller.keyId}/runs`, key, `API key ${caller.keyId}`);
    // The namespace's window is keyed as its tools' are (JSON of [namespace, name]), so whatever finds an end user's windows finds this one.
    if (ns !== undefined) await this.#windows(JSON.stringify([namespace, "tapedeck.quota.runs"]), ns, `namespace ${JSON.stringify(namespace)}`);
  }

  async #concurrency(namespace: string, limit: number): Promise<void> {
    const open = await this.store.listRuns({ namespace, status: ["queued", "running", "waiting"], limit: limit + 1_000 });
    const runs = open.filter((run) => !isSessionId(run.id)).length;
    if (runs < limit) return;
    throw quotaExceeded(
      `Quota exceeded: namespace ${JSON.stringify(namespace)} has ${runs} runs in progress, its quota of concurrent runs is ${limit}. Wait for one to end (or cancel one), then start again.`,
      CONCURRENCY_RETRY_AFTER_S,
    );
  }

  async #windows(key: string, limits: QuotaLimits, who: string): Promise<void> {
    const windows = [
      ...(limits.runsPerMinute === undefined ? [] : [{ ms: MINUTE, limit: limits.runsPerMinute }]),
      ...(limits.runsPerDay === undefined ? [] : [{ ms: DAY, limit: limits.runsPerDay }]),
    ];
    if (windows.length === 0) return;
    const rateLimits = this.store.rateLimits;
    if (rateLimits === undefined) throw new ApiError("misconfigured", "This server's store keeps no rate-limit windows, so its run quotas cannot be counted.");
    const taken = await rateLimits.take(key, windows, this.now());
    if (taken.ok) return;
    const per = taken.window.ms === MINUTE ? "minute" : "day";
    const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
    throw quotaExceeded(
      `Quota exceeded: ${who} may start ${taken.window.limit} runs per ${per}, and has. Start again in ${seconds} s (Retry-After), or do more in each run.`,
      seconds,
    );
  }
}

function quotaExceeded(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError("quota_exceeded", message, { retryAfterSeconds });
}
