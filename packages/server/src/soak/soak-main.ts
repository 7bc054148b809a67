/**
 * `npm run soak`: the crash and chaos soak at the size, on SQLite and (with
 * TAPEDECK_TEST_POSTGRES_URL and TAPEDECK_PG_CLUSTER, as `scripts/pg-cluster.sh run` sets them)
 * PostgreSQL with three nodes, with the default lease and a 3 s one, each under a CPU hog.
 * Prints the table of `soak-table.ts` and exits 1 on any loss.
 *
 *   npm run soak [-- --runs N --calls N --seed N --only sqlite|postgres --no-hog]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { parseArgs } from "node:util";
import { runSoak, soakFailures, type SoakFigures, type SoakOptions } from "./soak.js";
import { soakTable } from "./soak-table.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    calls: { type: "string", default: "20" },
    seed: { type: "string" },
    only: { type: "string" },
    "no-hog": { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const calls = Number(values.calls);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const url = process.env.TAPEDECK_TEST_POSTGRES_URL;

const soaks: SoakOptions[] = [];
const log = (line: string): void => void process.stderr.write(`${line}\n`);
if (values.only !== "postgres") {
  soaks.push({ label: "SQLite, 1 node", nodes: 1, runs, calls, seed, strikes: { "kill-node": 50, "kill-worker": 10 }, log });
}
if (values.only !== "sqlite") {
  if (url === undefined) {
    log("soak: no TAPEDECK_TEST_POSTGRES_URL: the PostgreSQL soaks are skipped (run `npm run soak`, which starts a cluster, or scripts/pg-cluster.sh run …)");
  } else {
    const strikes = { "kill-node": 20, "kill-worker": 5, "restart-db": 3, "db-outage": 1 } as const;
    soaks.push({ label: "PostgreSQL, 3 nodes, default lease", postgresUrl: url, nodes: 3, runs, calls, seed: seed + 1, strikes, log });
    soaks.push({ label: "PostgreSQL, 3 nodes, lease 3 s", postgresUrl: url, nodes: 3, runs, calls, seed: seed + 2, strikes, leaseMs: 3_000, log });
  }
}

// A CPU hog beside the soak, as the issue asks: a durability claim must hold under load.
let hog: ChildProcess | undefined;
if (!values["no-hog"]) hog = spawn("yes", [], { stdio: "ignore" });
const results: SoakFigures[] = [];
try {
  for (const options of soaks) results.push(await runSoak(options));
} finally {
  hog?.kill("SIGKILL");
}
console.log(soakTable(results));
const failures = results.flatMap(soakFailures);
for (const f of results) for (const problem of f.problems) log(`${f.label}: ${problem}`);
if (failures.length > 0) {
  console.log(`\nsoak FAILED:\n${failures.join("\n")}`);
  process.exit(1);
}
console.log(`\nsoak passed: nothing lost, stranded, duplicated or unverifiable (load: ${hog === undefined ? "none added" : "one CPU hog"}).`);
