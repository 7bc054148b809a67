import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * A PostgreSQL cluster of the test's own (`scripts/pg-cluster.sh start`: a temporary folder,
 * loopback, a free port, a random password), for tests that stop or restart the database: the
 * cluster other test files share (`TAPEDECK_TEST_POSTGRES_URL`) must stay up while they run.
 * Stops and starts are PostgreSQL's own (`pg_ctl -m fast`), run as the cluster's owner.
 */
export interface PrivateCluster {
  /** `postgres://tapedeck:<password>@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  /** `pg_ctl restart -m fast`: every connection is ended (57P01), the server is back at once. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: every connection ended, none accepted until `start`. */
  stop(): Promise<void>;
  /** Starts it again, with the settings (port, addresses) of its first start. */
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  close(): Promise<void>;
}

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../../../../../scripts/pg-cluster.sh", import.meta.url));

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const { stdout } = await run("bash", [SCRIPT, "start"]);
  const exported = Object.fromEntries([...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  const url = exported.TAPEDECK_TEST_POSTGRES_URL;
  const dir = exported.TAPEDECK_PG_CLUSTER;
  if (url === undefined || dir === undefined) throw new Error(`scripts/pg-cluster.sh start printed no URL and folder:\n${stdout}`);
  const data = join(dir, "data");
  // The command line of its first start (written by postgres): its port and addresses, for `start`.
  const opts = [...readFileSync(join(data, "postmaster.opts"), "utf8").matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const dataAt = opts.indexOf("-D");
  const serverOptions = opts.filter((_, i) => i !== dataAt && i !== dataAt + 1).join(" ");
  const pgCtl = async (...args: string[]): Promise<void> => {
    const bin = join(await pgBin(), "pg_ctl");
    // initdb and postgres refuse root: as root the cluster belongs to `postgres` (as in the script).
    const [file, argv] = process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
    // Bounded: a pg_ctl that does not return says so instead of holding the test until its file's limit.
    await run(file, argv, { timeout: 90_000 }).catch((error: Error) => {
      throw new Error(`pg_ctl ${args.at(-1)} of the test's cluster failed or hung: ${error.message}`, { cause: error });
    });
  };
  // The server's output goes to the log file: without -l the postgres that pg_ctl starts keeps pg_ctl's stdout open, and waiting for it never ends.
  const log = join(dir, "server.log");
  return {
    url,
    restart: () => pgCtl("-D", data, "-l", log, "-m", "fast", "-w", "-t", "30", "restart"),
    stop: () => pgCtl("-D", data, "-m", "fast", "-w", "stop"),
    start: () => pgCtl("-D", data, "-l", log, "-w", "-t", "30", "-o", serverOptions, "start"),
    close: async () => {
      await run("bash", [SCRIPT, "stop", dir]);
    },
  };
}

async function pgBin(): Promise<string> {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const { stdout } = await run("bash", ["-c", 'ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || dirname "$(command -v initdb)"']);
  return stdout.trim();
}
