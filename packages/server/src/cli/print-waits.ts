import { workerWaitText, type RunWait } from "@tapedeck/protocol";
import { dataFlagImplied } from "./args.js";
import { short } from "./print.js";
import { shellArg } from "../shell-arg.js";

export { shellArg };

/** How a parked run is printed: what it waits for, and the commands that resolve each wait. */

/** The flags of the command that prints, repeated in the commands it suggests so they can be pasted as they are. */
export interface CommandFlags {
  readonly data: string;
  readonly host?: string | undefined;
}

/** What a run waits for, as the commands print it: "sleep until …", "signal "go"", "approval of #3 …". */
export function describeWait(wait: RunWait): string {
  switch (wait.kind) {
    case "sleep":
      return `sleep until ${iso(wait.until)}`;
    case "signal":
      return `signal ${JSON.stringify(wait.name)}${wait.until === undefined ? "" : ` (times out at ${iso(wait.until)})`}`;
    case "approval":
      return `approval of #${wait.seq} ${wait.tool}(${short(wait.args)})`;
    case "parked":
      return `decision on parked #${wait.seq} ${wait.tool}(${short(wait.args)}) (${wait.reason}: ${wait.message})`;
    case "rate_limit":
      return `#${wait.seq} ${wait.tool}: its rate limit, until ${iso(wait.until)}`;
    case "child":
      return `workflow ${wait.workflow} (run ${wait.runId}) to end`;
    case "worker":
      return `#${wait.seq}: ${workerWaitText(wait, Date.now())}`;
  }
}

/**
 * The line printed when a run parks. `following`: this process keeps the run, wakes it at its
 * timers, and takes the signals and decisions sent from other processes.
 */
export function waitingLine(
  runId: string,
  pause: { readonly waits: readonly RunWait[]; readonly wakeAt?: number },
  flags: CommandFlags,
  following: boolean,
): string {
  const waits = pause.waits.map((wait) => {
    const resolve = resolution(runId, wait, flags, following);
    return resolve === undefined ? describeWait(wait) : `${describeWait(wait)} → ${resolve}`;
  });
  const line = `run ${runId} waiting: ${waits.join("; ")}`;
  if (!following) return line;
  if (pause.waits.every((wait) => wait.kind === "sleep" || wait.kind === "rate_limit")) return `${line} (this process wakes it then)`;
  const wakes = pause.wakeAt === undefined ? "" : `. This process wakes it at ${iso(pause.wakeAt)}`;
  return `${line}${wakes}. This process keeps the run: signals and decisions sent from another process reach it here`;
}

/** The command that resolves a wait; a sleep resolves itself (a detached one is woken by `resume`). */
function resolution(runId: string, wait: RunWait, flags: CommandFlags, following: boolean): string | undefined {
  const tail = flagText(flags);
  switch (wait.kind) {
    case "sleep":
    case "rate_limit":
      return following ? undefined : `tapedeck resume ${runId}${tail}`;
    case "signal":
      return `tapedeck signal ${runId} ${shellArg(wait.name)} --payload '<json>'${tail}`;
    case "approval":
    case "parked":
      return `tapedeck approve ${runId}/${wait.seq}${tail} | tapedeck reject ${runId}/${wait.seq} --reason <text>${tail}`;
    case "child":
      return undefined; // the child run ends by itself (it may wait in turn: see its own waits)
    case "worker":
      return `start a worker serving ${wait.tool} (the SDK's tapedeck.worker(), or --host with a module that implements it)`;
  }
}

/** ` --data <dir> --host <module>` as given, for a command printed to be pasted (`--data` left out when implied). */
export function flagText(flags: CommandFlags): string {
  const data = dataFlagImplied(flags.data) ? "" : ` --data ${shellArg(flags.data)}`;
  return `${data}${flags.host === undefined ? "" : ` --host ${shellArg(flags.host)}`}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
