import { optionalFlag, parse } from "../args.js";
import { withEngine } from "../context.js";
import { printEnd, type Output } from "../print.js";
import { printLogs } from "./logs.js";

export const resumeUsage = "tapedeck resume [<run_id>] [--host <module>] [--data <dir>]";

/**
 * Resumes runs an engine left `running` (it died or was killed): each replays its journal and
 * goes on. One run: printed as `run` prints. Several: one line per run.
 */
export async function resumeCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { host: { type: "string" } });
  return withEngine(values.data, optionalFlag(values.host, "host"), async (engine) => {
    const resumed = await engine.resume(positionals[0]);
    if (positionals[0] !== undefined) {
      const [only] = resumed;
      if (!only) return 0;
      const end = await only.end;
      await printLogs(engine, only.runId, out);
      return printEnd(out, end);
    }
    if (resumed.length === 0) out.stderr("no interrupted runs");
    let code = 0;
    for (const { runId, end } of resumed) {
      const result = await end;
      out.stderr(`${runId}: ${result.status}`);
      code = Math.max(code, printEnd(out, result));
    }
    return code;
  });
}
