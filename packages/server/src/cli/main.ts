import { cli } from "./cli.js";
import { processOutput } from "./print.js";

process.exitCode = await cli(process.argv.slice(2), processOutput);
// The command is done. Should anything still hold the event loop (a leaked handle), the process
// ends anyway after a grace period (unref'd: it never delays a clean exit), and says so.
setTimeout(() => {
  processOutput.stderr("tapedeck: something kept the process running after the command ended; exiting.");
  process.exit();
}, 5_000).unref();
