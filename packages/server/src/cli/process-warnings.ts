/**
 * Node's process warnings (`ExperimentalWarning`, deprecations), held from the moment the CLI
 * loads, then sent where the command says: `serve` logs them through its logger, so that a
 * `--log-format json` stream holds only JSON lines; every other command prints them as Node
 * would have. Node prints a warning from a 'warning' listener of its own, on the tick after it
 * was raised; this module is imported before anything that can raise one (cli/main.ts) and
 * takes Node's listener away, so nothing is printed behind the command's back.
 */
const held: Error[] = [];
let sink: ((warning: Error) => void) | undefined;

process.removeAllListeners("warning");
process.on("warning", (warning) => (sink ? sink(warning) : held.push(warning)));

/** Sends every warning held so far, and each one to come, to `to`. */
export function sendWarnings(to: (warning: Error) => void): void {
  sink = to;
  for (const warning of held.splice(0)) to(warning);
}

/** How Node prints one, for commands that do not log: `(node:PID) Name: message`. */
export function printWarning(warning: Error): void {
  process.stderr.write(`(node:${process.pid}) ${warning.name}: ${warning.message}\n`);
}
