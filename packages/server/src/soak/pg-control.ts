import { execFile } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Stops and starts the soak's PostgreSQL cluster, the one `scripts/pg-cluster.sh` made
 * (`TAPEDECK_PG_CLUSTER` names its folder): with `pg_ctl` as the cluster's owner (`postgres`
 * when the soak runs as root), as an operator restarting the database would.
 */
const run = promisify(execFile);

export interface PgControl {
  /** `pg_ctl restart -m fast`: every session is terminated (57P01), the server back at once. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: the database is unreachable until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export function pgControl(clusterDir: string | undefined = process.env.TAPEDECK_PG_CLUSTER): PgControl {
  if (clusterDir === undefined)
    throw new Error(
      "stopping PostgreSQL needs the cluster scripts/pg-cluster.sh made: run the soak under `scripts/pg-cluster.sh run …` (it sets TAPEDECK_PG_CLUSTER)",
    );
  const data = join(clusterDir, "data");
  const ctl = (...args: string[]): Promise<unknown> => {
    const pgCtl = join(pgBin(), "pg_ctl");
    const root = process.getuid?.() === 0;
    return root ? run("runuser", ["-u", "postgres", "--", pgCtl, "-D", data, ...args]) : run(pgCtl, ["-D", data, ...args]);
  };
  // `restart` reuses the options the server was started with (postmaster.opts); a `start` after a
  // `stop` must pass them again (the port, the loopback address, the socket folder).
  let options: string | undefined;
  return {
    restart: async () => void (await ctl("-m", "fast", "-w", "-t", "60", "restart", "-l", join(clusterDir, "server.log"))),
    stop: async () => {
      options = startOptions(readFileSync(join(data, "postmaster.opts"), "utf8"));
      await ctl("-m", "fast", "-w", "-t", "60", "stop");
    },
    start: async () => void (await ctl("-w", "-t", "60", "start", "-l", join(clusterDir, "server.log"), ...(options === undefined ? [] : ["-o", options]))),
  };
}

/** PostgreSQL's binaries: $PG_BIN, else the newest /usr/lib/postgresql/N/bin, as scripts/pg-cluster.sh finds them. */
function pgBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  try {
    const versions = readdirSync("/usr/lib/postgresql")
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(a) - Number(b));
    const newest = versions.at(-1);
    if (newest !== undefined) return join("/usr/lib/postgresql", newest, "bin");
  } catch {
    // No Debian layout: pg_ctl on the PATH.
  }
  return "";
}

/** The options of a postmaster.opts line (`/…/postgres "-D" "/…/data" "-c" "x=y" "-p" "5432"`) but the binary and its `-D`, quoted as pg_ctl's `-o` takes them. */
function startOptions(opts: string): string {
  const args = [...opts.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-D") i++;
    else kept.push(`"${args[i]}"`);
  }
  return kept.join(" ");
}
