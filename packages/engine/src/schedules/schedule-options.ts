import type { JsonValue } from "@tapedeck/protocol";
import { namespaceError } from "@tapedeck/protocol/api";
import type { CatchupPolicy, OverlapPolicy, SchedulePolicies, ScheduleTiming } from "../store/schedule-store.js";
import { valueProblem } from "../util/value-bounds.js";
import { SCHEDULE_LABEL } from "./fire-key.js";
import { ScheduleTimes } from "./schedule-times.js";

/**
 * What `engine.schedules.create` takes, each field with its default, and its check: a schedule
 * is refused whole, with every problem named, before anything is stored.
 */
export interface ScheduleOptions {
  /** The id of a registered toolset: the runs' toolset. */
  readonly toolset: string;
  /** Start this workflow of the toolset (`workflows.<name>`), its input checked against its schema. Exactly one of `workflow` and `source`. */
  readonly workflow?: string;
  /** Or start this script (TypeScript) on the toolset; it must type-check. */
  readonly source?: string;
  /** Each run's input. Default null. */
  readonly input?: JsonValue;
  /** A cron expression (5 fields, or 6 with seconds first), read in `timezone`. Exactly one of `cron` and `everyMs`. */
  readonly cron?: string;
  /** Or a fixed interval, ms (at least `MIN_INTERVAL_MS`), counted from `startAt`, else from the creation. */
  readonly everyMs?: number;
  /** The IANA zone (`Europe/Berlin`) of the cron expression. Default "UTC". */
  readonly timezone?: string;
  /** No fire before this time (ms since the epoch). Default: from now. */
  readonly startAt?: number;
  /** No fire at or after this time. Default: none. */
  readonly endAt?: number;
  /** At most this many scheduled fires. Default: no limit. */
  readonly maxFires?: number;
  /** What a fire does while a run of the schedule runs (`OverlapPolicy`). Default "skip". */
  readonly overlap?: OverlapPolicy;
  /** Which fires missed while no process fired start (`CatchupPolicy`). Default "latest". */
  readonly catchup?: CatchupPolicy;
  /** Missed fires older than this never start. Default 365 days. */
  readonly catchupWindowMs?: number;
  /** Each run's labels (the runs also get `tapedeck.schedule: <id>`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The runs' namespace (end user). */
  readonly namespace?: string;
  /** Each run's TTL, ms. Default: none. */
  readonly ttlMs?: number;
  /** Created paused. Default false. */
  readonly paused?: boolean;
  /** For whoever reads the schedule. At most 1,000 characters. */
  readonly note?: string;
}

/** The shortest interval: a schedule is not a loop. */
export const MIN_INTERVAL_MS = 1_000;
/** Temporal's default catch-up window: a year. */
export const DEFAULT_CATCHUP_WINDOW_MS = 365 * 24 * 3600_000;
const NOTE_MAX_CHARS = 1_000;

const OVERLAPS: readonly OverlapPolicy[] = ["skip", "buffer_one", "allow", "cancel_previous"];
const CATCHUPS: readonly CatchupPolicy[] = ["latest", "all", "none"];

/** The timing and policies `options` ask for, or every problem with them. */
export function checkScheduleOptions(
  options: ScheduleOptions,
  now: number,
): { readonly ok: true; readonly timing: ScheduleTiming; readonly policies: SchedulePolicies } | { readonly ok: false; readonly problems: string[] } {
  const problems: string[] = [];
  if (typeof options.toolset !== "string" || options.toolset === "") problems.push("toolset: the id of a registered toolset is required");
  if ((options.workflow === undefined) === (options.source === undefined))
    problems.push("give exactly one of workflow (a workflow's name) and source (a script)");
  if ((options.cron === undefined) === (options.everyMs === undefined)) problems.push("give exactly one of cron (an expression) and everyMs (an interval)");
  if (options.everyMs !== undefined && !(Number.isSafeInteger(options.everyMs) && options.everyMs >= MIN_INTERVAL_MS))
    problems.push(`everyMs must be a whole number of milliseconds, at least ${MIN_INTERVAL_MS}`);
  for (const [name, value] of [
    ["startAt", options.startAt],
    ["endAt", options.endAt],
  ] as const) {
    if (value !== undefined && !Number.isSafeInteger(value)) problems.push(`${name} must be a time in ms since the epoch`);
  }
  if (options.startAt !== undefined && options.endAt !== undefined && options.endAt <= options.startAt) problems.push("endAt must be after startAt");
  if (options.maxFires !== undefined && !(Number.isSafeInteger(options.maxFires) && options.maxFires > 0))
    problems.push("maxFires must be a positive whole number");
  if (options.overlap !== undefined && !OVERLAPS.includes(options.overlap)) problems.push(`overlap must be one of ${OVERLAPS.join(", ")}`);
  if (options.catchup !== undefined && !CATCHUPS.includes(options.catchup)) problems.push(`catchup must be one of ${CATCHUPS.join(", ")}`);
  if (options.catchupWindowMs !== undefined && !(Number.isSafeInteger(options.catchupWindowMs) && options.catchupWindowMs >= 0))
    problems.push("catchupWindowMs must be a whole number of milliseconds");
  if (options.ttlMs !== undefined && !(Number.isSafeInteger(options.ttlMs) && options.ttlMs > 0))
    problems.push("ttlMs must be a positive number of milliseconds");
  if (options.note !== undefined && (typeof options.note !== "string" || options.note.length > NOTE_MAX_CHARS))
    problems.push(`note must be a string of at most ${NOTE_MAX_CHARS} characters`);
  if (options.labels !== undefined && Object.hasOwn(options.labels, SCHEDULE_LABEL))
    problems.push(`labels: ${SCHEDULE_LABEL} is set by the schedule itself (to its id) on each run; leave it out`);
  const inputProblem = options.input === undefined ? undefined : valueProblem(options.input);
  if (inputProblem !== undefined) problems.push(`input: ${inputProblem}`);
  const misspelt = options.namespace === undefined || options.namespace === "" ? undefined : namespaceError(options.namespace, "namespace");
  if (misspelt !== undefined) problems.push(misspelt);
  const timezone = options.timezone ?? "UTC";
  if (!isTimeZone(timezone)) problems.push(`timezone ${JSON.stringify(timezone)} is not an IANA time zone (such as "Europe/Berlin" or "UTC")`);
  const timing: ScheduleTiming = {
    timezone,
    ...(options.cron === undefined ? {} : { cron: options.cron }),
    ...(options.everyMs === undefined ? {} : { everyMs: options.everyMs }),
    ...(options.startAt === undefined ? {} : { startAt: options.startAt }),
    ...(options.endAt === undefined ? {} : { endAt: options.endAt }),
    ...(options.maxFires === undefined ? {} : { maxFires: options.maxFires }),
  };
  if (problems.length === 0 && options.cron !== undefined) {
    try {
      new ScheduleTimes(timing, now).next(now, 0);
    } catch (error) {
      problems.push(`cron ${JSON.stringify(options.cron)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const policies: SchedulePolicies = {
    overlap: options.overlap ?? "skip",
    catchup: options.catchup ?? "latest",
    catchupWindowMs: options.catchupWindowMs ?? DEFAULT_CATCHUP_WINDOW_MS,
  };
  return { ok: true, timing, policies };
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
