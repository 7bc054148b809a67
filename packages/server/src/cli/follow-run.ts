import type { Engine } from "@tapedeck/engine";
import { printLogs } from "./commands/logs.js";
import { printEnd, type Output } from "./print.js";
import { flagText, shellArg, waitingLine, type CommandFlags } from "./print-waits.js";

/**
 * How a command stays with a run it started, resumed, signalled or decided on: it prints the
 * run's log lines and a line each time it parks, and either returns at the first park or keeps
 * the run in this process until it ends: the engine holds it, wakes it at its timers, and
 * applies the signals and decisions other processes send it (see `withEngine`). Nothing here
 * waits by polling: `Engine.settled` says at once whether the run is parked, else resolves at
 * its next end or park.
 */

/** How a run stopped being followed: its end, its pause, or undefined when it executes in another process. */
export type Settled = Awaited<ReturnType<Engine["settled"]>>;

export interface FollowOptions {
  /** `end`: keep the run in this process until it ends, waking it at its timers. `park`: return when it parks. */
  readonly until: "end" | "park";
  /** Print the run's log lines from this journal index on. Omitted: print none. */
  readonly logsFrom?: number;
  /** Repeated in the commands the waiting line suggests. */
  readonly flags: CommandFlags;
}

/**
 * Follows a run of this engine until it ends or (with `until: "park"`) parks. With
 * `until: "end"` a parked run keeps the process up (its engine holds the run) until a timer,
 * a signal or a decision wakes it here.
 */
export async function followRun(engine: Engine, runId: string, out: Output, options: FollowOptions): Promise<Settled> {
  let logsFrom = options.logsFrom;
  let settled = await engine.settled(runId);
  for (;;) {
    if (logsFrom !== undefined) logsFrom = await printLogs(engine, runId, out, logsFrom);
    if (settled?.status !== "waiting") return settled;
    out.stderr(waitingLine(runId, settled, options.flags, options.until === "end"));
    if (options.until === "park") return settled;
    settled = await engine.settled(runId, { next: true });
  }
}

/**
 * Prints how following a run ended (a waiting line is printed already) and returns the exit
 * code. An ended run's id follows its output or error on stderr; a failed one's with the
 * `fork` command that reruns it with a corrected script (`script`: the path to suggest).
 */
export function printSettled(out: Output, runId: string, settled: Settled, flags: CommandFlags, script?: string): number {
  if (settled === undefined) {
    out.stderr(
      `run ${runId} is executing in another process, or was left running by one that stopped (continue it with: tapedeck resume ${runId}${flagText(flags)})`,
    );
    return 0;
  }
  if (settled.status === "waiting") return 0;
  const code = printEnd(out, settled);
  const show = `tapedeck show ${runId}${flagText({ data: flags.data })}`;
  if (settled.status === "failed") {
    out.stderr(
      `run ${runId} failed (${show}). Fix the script and fork the run; the calls it completed are reused, not sent again: tapedeck fork ${runId} ${script === undefined ? "<script.ts>" : shellArg(script)}${flagText(flags)}`,
    );
  } else {
    out.stderr(`run ${runId} ${settled.status} (${show})`);
  }
  return code;
}
