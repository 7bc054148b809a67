import { EngineError } from "@tapedeck/engine";
import { UsageError } from "./args.js";
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
const COMMANDS: Record<string, { run: (args: readonly string[], out: Output) => Promise<number>; usage: string }> = {
  check: { run: checkCommand, usage: checkUsage },
  run: { run: runCommand, usage: runUsage },
  runs: { run: runsCommand, usage: runsUsage },
  show: { run: showCommand, usage: showUsage },
  resume: { run: resumeCommand, usage: resumeUsage },
  fork: { run: forkCommand, usage: forkUsage },
  cancel: { run: cancelCommand, usage: cancelUsage },
  signal: { run: signalCommand, usage: signalUsage },
  approvals: { run: approvalsCommand, usage: approvalsUsage },
  approve: { run: approveCommand, usage: approveUsage },
  reject: { run: rejectCommand, usage: rejectUsage },
  toolset: { run: toolsetCommand, usage: toolsetUsage },
  verify: { run: verifyCommand, usage: verifyUsage },
  test: { run: testCommand, usage: testUsage },
  cassette: { run: cassetteCommand, usage: cassetteUsage },
  serve: { run: serveCommand, usage: serveUsage },
  keys: { run: keysCommand, usage: keysUsage },
  credentials: { run: credentialsCommand, usage: credentialsUsage },
};

function usage(): string {
  return ["usage:", ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join("\n");
}

export async function cli(argv: readonly string[], output: Output): Promise<number> {
  // Run data (logs, arguments, results, errors) is printed escaped: it cannot drive the terminal.
  const out = terminalOutput(output);
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    out.stdout(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    out.stderr(`unknown command "${name}"\n${usage()}`);
    return 2;
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
