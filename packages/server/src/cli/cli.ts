import { DATA_ENV, UsageError } from "./args.js";
import { COMMANDS, type CommandEntry } from "./command-table.js";
import { terminalOutput, type Output } from "./print.js";
import { startTracing, type Tracing } from "../telemetry/tracing.js";

/**
 * The `tapedeck` command: a thin shell over the engine's library functions. Exit codes:
 * 0 success (a run left waiting included), 1 the script or run failed (or did not type-check),
 * or what was asked does not exist or does not fit the run's state (`not_found`, `conflict`),
 * 2 a usage error (a malformed argument, a missing host module). Help is answered from the
 * command table alone; a command's module (and the engine) is loaded only to run it.
 */
/** The subcommands, in the order `tapedeck help` lists them. */
export const COMMAND_NAMES: readonly string[] = [...COMMANDS.keys()];

const DATA_NOTE = `Every command takes --data <dir>: the data folder (default: $${DATA_ENV}, else ./.tapedeck). Only run, toolset register and serve create one.`;

function usage(): string {
  return ["usage:", ...[...COMMANDS.values()].map((c) => `  ${c.usage}`), "", DATA_NOTE, "tapedeck <command> --help says what a command does."].join("\n");
}

function help(name: string, command: CommandEntry): string {
  return [`tapedeck ${name}: ${command.summary}`, "", `usage: ${command.usage}`, "", DATA_NOTE].join("\n");
}

/** `--help` or `-h` anywhere but as the value of a flag that takes one (`--reason -h` is a reason). */
function asksHelp(args: readonly string[]): boolean {
  return args.some((arg, i) => (arg === "--help" || arg === "-h") && !(i > 0 && /^--[a-z-]+$/.test(args[i - 1]!) && !BOOLEAN_FLAGS.has(args[i - 1]!)));
}

/** Flags that take no value: a `--help` after one is still a request for help. */
const BOOLEAN_FLAGS = new Set(["--detach", "--json", "--paused", "--dry-run", "--help", "-h"]);

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
  let tracing: Tracing | undefined;
  try {
    if (TRACED.has(name)) tracing = await startTracing();
  } catch (error) {
    out.stderr(`error: ${(error as Error).message}`);
    return 2;
  }
  try {
    return await (
      await command.load()
    )(args, out);
  } catch (error) {
    if (error instanceof UsageError) {
      out.stderr(`${error.message}\nusage: ${command.usage}`);
      return 2;
    }
    // The engine is loaded already when one of its errors reached here (by the command that threw it).
    const { EngineError } = await import("@tapedeck/engine");
    if (error instanceof EngineError) {
      out.stderr(`error: ${error.message}`);
      return error.code === "not_found" || error.code === "conflict" ? 1 : 2;
    }
    // A fault of the engine or the machine: runs it touched stay `running`, intact in the
    // journal, and `tapedeck resume` continues them. The stack is for whoever reports the bug.
    const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    out.stderr(`tapedeck failed: ${detail}\nRuns in progress are intact; continue them with: tapedeck resume`);
    return 1;
  } finally {
    // The spans still batched go out before the process ends (`serve`: once it has stopped).
    await tracing?.shutdown().catch((error: unknown) => out.stderr(`tapedeck: spans could not be exported at the end: ${(error as Error).message}`));
  }
}

/** The commands that run runs, and so export their spans when the OTEL_* variables ask for it (`telemetry/tracing.ts`). */
const TRACED = new Set(["serve", "run", "resume", "fork"]);
