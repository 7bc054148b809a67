import { systemClock, type Engine } from "@tapedeck/engine";
import { printLogs } from "./commands/logs.js";
import { printEnd, type Output } from "./print.js";
import { waitingLine, type CommandFlags } from "./print-waits.js";

/**
 * How a command stays with a run it started, resumed, signalled or decided on: it prints the
 * run's log lines and a line each time it parks, and either returns at the first park or keeps
 * the run in this process until it ends, waking it at its timers itself (the engine's own wake
 * timer is off in the CLI: see `withEngine`). Nothing here waits by polling: `Engine.settled`
 * says at once whether the run is parked, else resolves at its next end or park.
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
 * Follows a run of this engine until it ends or (with `until: "park"`) parks. A parked run with
 * no timer cannot be woken by this process: with `until: "end"` the process then stays up until
 * it is stopped, as the waiting line says.
 */
export async function followRun(engine: Engine, runId: string, out: Output, options: FollowOptions): Promise<Settled> {
  let logsFrom = options.logsFrom;
  let settled = await engine.settled(runId);
  for (;;) {
    if (logsFrom !== undefined) logsFrom = await printLogs(engine, runId, out, logsFrom);
    if (settled?.status !== "waiting") return settled;
    out.stderr(waitingLine(runId, settled, options.flags, options.until === "end"));
    if (options.until === "park") return settled;
    settled = await wakeWhenDue(engine, runId, settled.wakeAt);
  }
}

/** Prints how following a run ended (a waiting line is printed already) and returns the exit code. */
export function printSettled(out: Output, runId: string, settled: Settled): number {
  if (settled === undefined) {
    out.stderr(`run ${runId} is executing in another process, or was left running by one that stopped (continue it with: tapedeck resume ${runId})`);
    return 0;
  }
  return settled.status === "waiting" ? 0 : printEnd(out, settled);
}

/** Waits for the parked run's earliest timer, wakes the run here, and resolves with its next end or park. */
async function wakeWhenDue(engine: Engine, runId: string, wakeAt: number | undefined): Promise<Settled> {
  await (wakeAt === undefined ? forever() : due(wakeAt));
  // Another process may have woken, decided on or cancelled it meanwhile: only a run that still waits is woken here.
  if ((await engine.getRun(runId)).status === "waiting") await engine.resume(runId);
  return engine.settled(runId);
}

function due(at: number): Promise<void> {
  return new Promise((resolve) => systemClock.setTimer(at, resolve));
}

/** Never resolves, and keeps the process up (a pending promise alone does not): it ends when the process is stopped. */
function forever(): Promise<never> {
  return new Promise(() => setInterval(() => {}, 2 ** 30));
}
