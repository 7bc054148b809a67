import { optionalFlag, parse } from "../args.js";
import { withEngine } from "../context.js";
import { followRun, printSettled, type FollowOptions } from "../follow-run.js";
import type { Output } from "../print.js";

/**
 * Resumes runs an engine left `running` (it died or was killed) and parked runs whose timers
 * are due; given a run id, that run whatever it waits for. Each replays its journal and goes
 * on here, followed as `run` follows a run (`--detach`: until it parks). One run: printed as
 * `run` prints. Several: a status line for each, then its output or error.
 */
export async function resumeCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { host: { type: "string" }, detach: { type: "boolean" } });
  const host = optionalFlag(values.host, "host");
  const follow: FollowOptions = { until: values.detach ? "park" : "end", flags: { data: values.data, host } };
  return withEngine(values.data, host, async (engine) => {
    const resumed = await engine.resume(positionals[0]);
    if (positionals[0] !== undefined) {
      const [only] = resumed;
      if (!only) return 0;
      return printSettled(out, only.runId, await followRun(engine, only.runId, out, { ...follow, logsFrom: 0 }), follow.flags);
    }
    if (resumed.length === 0) out.stderr("no interrupted runs, and no waiting run is due");
    // Followed side by side: a run parked until next week must not hold back the others' outcomes.
    const codes = await Promise.all(
      resumed.map(async ({ runId }) => {
        const settled = await followRun(engine, runId, out, follow);
        if (settled && settled.status !== "waiting") out.stderr(`${runId}: ${settled.status}`);
        return printSettled(out, runId, settled, follow.flags);
      }),
    );
    return Math.max(0, ...codes);
  });
}
