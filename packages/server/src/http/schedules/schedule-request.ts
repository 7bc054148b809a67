import { parseDuration, type ScheduleOptions } from "@tapedeck/engine";
import type { CreateScheduleRequest } from "@tapedeck/protocol/api";

/**
 * `POST /v1/schedules`' body as the engine's `ScheduleOptions`, once the caller's scope has
 * placed it (namespace, labels). The API writes durations as "15m" or ms (`every`,
 * `catchupWindow`, `ttl`) where the engine takes ms (`everyMs`, …): a duration that does not
 * parse is a problem said with the others the engine finds, so one answer names every problem.
 */
export interface ScheduleRequestOptions {
  readonly options: ScheduleOptions;
  /** Problems of the API's own fields (a duration that does not parse). */
  readonly problems: readonly string[];
}

/** The API's duration fields, by the engine's field they stand for. */
const DURATIONS = [
  ["every", "everyMs"],
  ["catchupWindow", "catchupWindowMs"],
  ["ttl", "ttlMs"],
] as const;

export function scheduleOptions(
  body: CreateScheduleRequest,
  placed: { readonly namespace?: string; readonly labels: Readonly<Record<string, string>> },
): ScheduleRequestOptions {
  const problems: string[] = [];
  const durations: Partial<Record<(typeof DURATIONS)[number][1], number>> = {};
  for (const [field, engineField] of DURATIONS) {
    const value = body[field];
    if (value === undefined) continue;
    try {
      durations[engineField] = parseDuration(value, field);
    } catch (error) {
      problems.push(`${(error as Error).message}, or a number of milliseconds`);
      // Refused below whatever else is right: NaN is never a valid duration to the engine, whose own sentence for it is dropped (`engineProblems`).
      durations[engineField] = Number.NaN;
    }
  }
  const { every: _every, catchupWindow: _window, ttl: _ttl, labels: _labels, namespace: _namespace, ...rest } = body;
  const options: ScheduleOptions = {
    ...rest,
    ...durations,
    ...(Object.keys(placed.labels).length === 0 ? {} : { labels: placed.labels }),
    ...(placed.namespace === undefined ? {} : { namespace: placed.namespace }),
  };
  return { options, problems };
}

/** The engine's problems in the API's words (`every`, not `everyMs`), without those of a field whose duration did not parse (said already). */
export function engineProblems(problems: readonly string[], request: ScheduleRequestOptions): string[] {
  const unparsed = new Set(DURATIONS.filter(([, engineField]) => Number.isNaN(request.options[engineField])).map(([field]) => field));
  return problems
    .map((problem) => DURATIONS.reduce((text, [field, engineField]) => (text.startsWith(engineField) ? field + text.slice(engineField.length) : text), problem))
    .filter((problem) => ![...unparsed].some((field) => problem.startsWith(`${field} `)));
}
