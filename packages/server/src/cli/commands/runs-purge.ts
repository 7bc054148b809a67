import type { PurgeResult } from "@tapedeck/engine";
import { purgeBefore } from "../../retention/purge-before.js";
import { optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import type { Output } from "../print.js";

/**
 * `tapedeck runs purge --before <time|duration> [--dry-run]`: deletes the runs that ended before
 * the time (and the direct sessions unused since), whole, in bounded batches; a dry run counts.
 * Runs not ended, and runs whose workflow relative has not ended, stay.
 */
export async function runsPurgeCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { before: { type: "string" }, "dry-run": { type: "boolean" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const beforeFlag = optionalFlag(values.before, "before");
  if (beforeFlag === undefined) throw new UsageError('--before is required: an ISO time ("2026-01-31") or how long ago ("30d")');
  let before: number;
  try {
    before = purgeBefore(beforeFlag, Date.now());
  } catch (error) {
    throw new UsageError(`--${(error as Error).message}`);
  }
  return withEngine(values.data, undefined, async (engine) => {
    const result = await engine.purgeRuns({ before, dryRun: values["dry-run"] === true });
    out.stdout(purgeSummary(result, before));
    return 0;
  });
}

/** One line: what was (or would be) deleted. */
export function purgeSummary(result: PurgeResult, before: number): string {
  const what = `${result.runs} run(s) and ${result.sessions} session(s) (${result.journalEntries} journal entries) ended before ${new Date(before).toISOString()}`;
  return result.dryRun ? `would purge ${what}; nothing was deleted (dry run)` : `purged ${what} in ${result.batches} batch(es)`;
}
