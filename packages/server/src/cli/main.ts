import { cli } from "./cli.js";
import { processOutput } from "./print.js";

process.exitCode = await cli(process.argv.slice(2), processOutput);
