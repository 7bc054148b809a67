import { EngineError } from "@tapedeck/engine";
import { DATA_ENV, UsageError } from "./args.js";
import { approvalsCommand, approvalsUsage } from "./commands/approvals.js";
import { cancelCommand, cancelUsage } from "./commands/cancel.js";
import { cassetteCommand, cassetteUsage } from "./commands/cassette.js";
import { checkCommand, checkUsage } from "./commands/check.js";
import { credentialsCommand, credentialsUsage } from "./commands/credentials.js";
import { approveCommand, approveUsage, rejectCommand, rejectUsage } from "./commands/decide.js";
import { forkCommand, forkUsage } from "./commands/fork.js";
import { keysCommand, keysUsage } from "./commands/keys.js";
import { resumeCommand, resumeUsage } from "./commands/resume.js";
import { runCommand, runUsage } from "./commands/run.js";
import { runsCommand, runsUsage } from "./commands/runs.js";
import { serveCommand, serveUsage } from "./commands/serve.js";
import { showCommand, showUsage } from "./commands/show.js";
import { signalCommand, signalUsage } from "./commands/signal.js";
import { testCommand, testUsage } from "./commands/test.js";
import { toolsetCommand, toolsetUsage } from "./commands/toolset.js";
import { verifyCommand, verifyUsage } from "./commands/verify.js";
import { terminalOutput, type Output } from "./print.js";

/**
 * The `tapedeck` command: a thin shell over the engine's library functions. Exit codes:
 * 0 success (a run left waiting included), 1 the script or run failed (or did not type-check),
 * or what was asked does not exist or does not fit the run's state (`not_found`, `conflict`),
 * 2 a usage error (a malformed argument, a missing host module).
 */
interface Command {
  readonly run: (args: readonly string[], out: Output) => Promise<number>;
  readonly usage: string;
  /** What it does, in one line: `tapedeck <command> --help` and `tapedeck help` print it. */
  readonly summary: string;
}

const COMMANDS: ReadonlyMap<string, Command> = new Map([
  [
    "check",
    { run: checkCommand, usage: checkUsage, summary: "Type-checks a script against a toolset file; prints diagnostics with code frames (writes nothing)." },
  ],
  [
    "run",
    {
      run: runCommand,
      usage: runUsage,
      summary: "Runs a script to its end: the output on stdout, or the error on stderr, then the run's id. Creates the data folder if needed.",
    },
  ],
  ["runs", { run: runsCommand, usage: runsUsage, summary: "Lists runs, newest first (a waiting run with what it waits for)." }],
  ["show", { run: showCommand, usage: showUsage, summary: "Prints a run's state and its whole journal." }],
  [
    "resume",
    {
      run: resumeCommand,
      usage: resumeUsage,
      summary: "Resumes runs an engine left running and waiting runs that are due (or the run given), and keeps them as run does.",
    },
  ],
  ["fork", { run: forkCommand, usage: forkUsage, summary: "Reruns a run with a corrected script: calls the parent completed are reused, not sent again." }],
  ["cancel", { run: cancelCommand, usage: cancelUsage, summary: "Cancels a run that has not ended." }],
  ["signal", { run: signalCommand, usage: signalUsage, summary: "Sends a signal to a run; a run parked on it goes on here." }],
  ["approvals", { run: approvalsCommand, usage: approvalsUsage, summary: "Lists the calls waiting for a decision (approve or reject)." }],
  ["approve", { run: approveCommand, usage: approveUsage, summary: "Approves a call waiting for approval (or parked): it is sent, and the run goes on here." }],
  ["reject", { run: rejectCommand, usage: rejectUsage, summary: "Rejects a call waiting for approval (or parked): the script gets a ToolError." }],
  [
    "toolset",
    { run: toolsetCommand, usage: toolsetUsage, summary: "Registers a toolset file: prints its id and declarations. Creates the data folder if needed." },
  ],
  [
    "verify",
    {
      run: verifyCommand,
      usage: verifyUsage,
      summary: "Replays a run's journal in a fresh sandbox, sending nothing, and says whether the script still does what was recorded.",
    },
  ],
  ["test", { run: testCommand, usage: testUsage, summary: "Tests a script against a scenario or cassette in virtual time: nothing is sent, no run is kept." }],
  [
    "cassette",
    { run: cassetteCommand, usage: cassetteUsage, summary: "Exports a run's recorded calls, signals and decisions as a scenario for tapedeck test." },
  ],
  ["serve", { run: serveCommand, usage: serveUsage, summary: "Runs the HTTP server until SIGINT or SIGTERM. Creates the data folder if needed." }],
  ["keys", { run: keysCommand, usage: keysUsage, summary: "Creates an API key in a server's data folder, printed once." }],
  ["credentials", { run: credentialsCommand, usage: credentialsUsage, summary: "Sets, lists, deletes credentials of the vault, or rotates its master key." }],
]);

/** The subcommands, in the order `tapedeck help` lists them. */
export const COMMAND_NAMES: readonly string[] = [...COMMANDS.keys()];

const DATA_NOTE = `Every command takes --data <dir>: the data folder (default: $${DATA_ENV}, else ./.tapedeck). Only run, toolset register and serve create one.`;

function usage(): string {
  return ["usage:", ...[...COMMANDS.values()].map((c) => `  ${c.usage}`), "", DATA_NOTE, "tapedeck <command> --help says what a command does."].join("\n");
}

function help(name: string, command: Command): string {
  return [`tapedeck ${name}: ${command.summary}`, "", `usage: ${command.usage}`, "", DATA_NOTE].join("\n");
}

/** `--help` or `-h` anywhere but as the value of a flag that takes one (`--reason -h` is a reason). */
function asksHelp(args: readonly string[]): boolean {
  return args.some((arg, i) => (arg === "--help" || arg === "-h") && !(i > 0 && /^--[a-z-]+$/.test(args[i - 1]!) && !BOOLEAN_FLAGS.has(args[i - 1]!)));
}

/** Flags that take no value: a `--help` after one is still a request for help. */
const BOOLEAN_FLAGS = new Set(["--detach", "--json", "--help", "-h"]);

export async function cli(argv: readonly string[], output: Output): Promise<number> {
  // Run data (logs, arguments, results, errors) is printed escaped: it cannot drive the terminal.
  const out = terminalOutput(output);
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const asked = name === "help" ? args[0] : undefined;
    const command = asked === undefined ? undefined : COMMANDS.get(asked);
    out.stdout(command ? help(asked!, command) : usage());
    return name === undefined || (asked !== undefined && !command) ? 2 : 0;
  }
  const command = COMMANDS.get(name);
  if (!command) {
    out.stderr(`unknown command "${name}"\n${usage()}`);
    return 2;
  }
  if (asksHelp(args)) {
    out.stdout(help(name, command));
    return 0;
  }
  try {
    return await command.run(args, out);
  } catch (error) {
    if (error instanceof UsageError) {
      out.stderr(`${error.message}\nusage: ${command.usage}`);
      return 2;
    }
    if (error instanceof EngineError) {
      out.stderr(`error: ${error.message}`);
      return error.code === "not_found" || error.code === "conflict" ? 1 : 2;
    }
    // A fault of the engine or the machine: runs it touched stay `running`, intact in the
    // journal, and `tapedeck resume` continues them. The stack is for whoever reports the bug.
    const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    out.stderr(`tapedeck failed: ${detail}\nRuns in progress are intact; continue them with: tapedeck resume`);
    return 1;
  }
}
