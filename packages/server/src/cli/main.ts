// First: Node's warnings are held from here on (see process-warnings.ts). The rest of the CLI is
// imported after, dynamically: static imports are all loaded and linked before this module's
// first line runs, and linking a Node builtin (node:wasi) raises its warning right then.
import { printWarning, sendWarnings } from "./process-warnings.js";

const { cli } = await import("./cli.js");
const { processOutput } = await import("./print.js");

// `serve` logs them in its log's format; every other command prints them as Node would.
if (process.argv[2] !== "serve") sendWarnings(printWarning);
process.exitCode = await cli(process.argv.slice(2), processOutput);
// The command is done. Should anything still hold the event loop (a leaked handle), the process
// ends anyway after a grace period (unref'd: it never delays a clean exit), and says so.
setTimeout(() => {
  processOutput.stderr("tapedeck: something kept the process running after the command ended; exiting.");
  process.exit();
}, 5_000).unref();
