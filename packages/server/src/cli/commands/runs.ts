import { RunStatus } from "@tapedeck/protocol";
import { optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import type { Output } from "../print.js";
import { runLine } from "../run-line.js";
import { runDamage } from "../run-damage.js";

/** Lists runs, newest first; a waiting run with what it waits for. */
export async function runsCommand(args: readonly string[], out: Output): Promise<number> {
  if (args[0] === "purge") return (await import("./runs-purge.js")).runsPurgeCommand(args.slice(1), out);
  if (args[0] === "follow") return (await import("./runs-follow.js")).runsFollowCommand(args.slice(1), out);
  if (args.includes("--watch")) return (await import("./runs-watch.js")).runsWatchCommand(args, out);
  const { values } = parse(args, { status: { type: "string" }, limit: { type: "string" } });
  const status = optionalFlag(values.status, "status");
  const limitFlag = optionalFlag(values.limit, "limit");
  const statuses = Object.values(RunStatus) as string[];
  if (status !== undefined && !statuses.includes(status)) {
    throw new UsageError(`--status must be one of ${statuses.join(", ")}`);
  }
  const limit = limitFlag === undefined ? 50 : Number(limitFlag);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit must be a positive integer");
  return withEngine(values.data, undefined, async (engine) => {
    const runs = await engine.listRuns({ ...(status ? { status: [status as RunStatus] } : {}), limit, includeDamaged: true });
    if (runs.length === 0) out.stderr("no runs");
    for (const run of runs) {
      const damage = runDamage(run);
      if (damage !== undefined) {
        out.stdout(`${run.id}  ${"damaged".padEnd(9)}  ${damage}; the data folder's other runs are listed as usual`);
        continue;
      }
      out.stdout(runLine({ ...run, toolset: run.toolsetId }));
    }
    return 0;
  });
}
