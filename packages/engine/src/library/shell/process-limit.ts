import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * How the shell sandbox bounds the number of processes a command may have (a fork bomb must
 * stop at the bound, not at the machine's). Two ways, chosen once by `chooseProcessLimit`:
 *
 * - `rlimit`: the command runs under RLIMIT_NPROC (`prlimit --nproc`, with the other rlimits of
 *   `shell-limits.ts`), set inside the sandbox's own user namespace, where the kernel counts only
 *   that sandbox's processes. Commands never run as root (an engine running as root runs them
 *   as the sandbox user), so the kernel always applies it.
 * - `cgroup`: for root, where one can be made: the sandbox is also started inside a fresh pids
 *   cgroup (v1 `pids`, or v2 with the `pids` controller delegated) whose `pids.max` is the bound;
 *   the cgroup also lets every process of the command be killed at once, and is removed afterwards.
 *
 * Without util-linux's `prlimit` (and, for root, `setpriv`) the shell is not offered, and the
 * reason says what to install.
 */

export type ProcessLimit =
  /** RLIMIT_NPROC inside the sandbox's user namespace. */
  | { readonly kind: "rlimit"; readonly prlimit: string }
  /** A pids cgroup per command, made under `parent`. */
  | { readonly kind: "cgroup"; readonly parent: string; readonly version: 1 | 2 };

export type ProcessLimitChoice = { readonly ok: true; readonly limit: ProcessLimit } | { readonly ok: false; readonly reason: string };

/** Sets a command's rlimits inside the sandbox (util-linux, which Debian always has). */
export const PRLIMIT = "/usr/bin/prlimit";
/** Makes the root wrapper the sandbox user (util-linux). */
export const SETPRIV = "/usr/bin/setpriv";

export async function chooseProcessLimit(): Promise<ProcessLimitChoice> {
  const root = process.getuid?.() === 0;
  for (const tool of root ? [PRLIMIT, SETPRIV] : [PRLIMIT]) {
    if (!existsSync(tool)) return { ok: false, reason: `${tool} (Debian's util-linux) is missing: it bounds and drops the privileges of shell commands` };
  }
  // Root: commands run as the sandbox user, where RLIMIT_NPROC applies too; a cgroup also kills every process at once.
  if (root) {
    for (const candidate of cgroupCandidates()) {
      if (await canMakeChild(candidate.parent)) return { ok: true, limit: candidate };
    }
  }
  return { ok: true, limit: { kind: "rlimit", prlimit: PRLIMIT } };
}

function cgroupCandidates(): { kind: "cgroup"; parent: string; version: 1 | 2 }[] {
  const candidates: { kind: "cgroup"; parent: string; version: 1 | 2 }[] = [];
  if (existsSync("/sys/fs/cgroup/pids/cgroup.procs")) candidates.push({ kind: "cgroup", parent: "/sys/fs/cgroup/pids", version: 1 });
  // cgroup v2: our own cgroup, if it delegates the pids controller to its children.
  const own = /^0::(\/.*)$/m.exec(readText("/proc/self/cgroup"))?.[1];
  for (const mount of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    const parent = own === undefined ? undefined : join(mount, own);
    if (parent !== undefined && /\bpids\b/.test(readText(join(parent, "cgroup.subtree_control")))) candidates.push({ kind: "cgroup", parent, version: 2 });
  }
  return candidates;
}

async function canMakeChild(parent: string): Promise<boolean> {
  const probe = join(parent, `tapedeck-probe-${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(probe);
    await writeFile(join(probe, "pids.max"), "8");
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

/** A pids cgroup for one command: made with its bound, then emptied (every process killed) and removed. */
export class PidsCgroup {
  private constructor(
    readonly path: string,
    private readonly version: 1 | 2,
  ) {}

  static async create(limit: Extract<ProcessLimit, { kind: "cgroup" }>, maxProcesses: number): Promise<PidsCgroup> {
    const path = join(limit.parent, `tapedeck-shell-${randomBytes(8).toString("hex")}`);
    await mkdir(path);
    await writeFile(join(path, "pids.max"), String(maxProcesses));
    return new PidsCgroup(path, limit.version);
  }

  /** Whether the bound was reached (a fork was refused) while the command ran. */
  async limitReached(): Promise<boolean> {
    const events = await readFile(join(this.path, "pids.events"), "utf8").catch(() => "");
    return /^max [1-9]/m.test(events);
  }

  /** Kills whatever is left in it and removes it; never throws (a cgroup left behind is only a folder). */
  async remove(): Promise<void> {
    // Killed processes take a few milliseconds to leave; the cgroup is given two seconds.
    for (let round = 0; round < 400; round++) {
      if (this.version === 2 && existsSync(join(this.path, "cgroup.kill"))) await writeFile(join(this.path, "cgroup.kill"), "1").catch(() => undefined);
      const pids = (await readFile(join(this.path, "cgroup.procs"), "utf8").catch(() => ""))
        .split("\n")
        .filter((line) => line !== "")
        .map(Number);
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
      try {
        await rmdir(this.path);
        return;
      } catch {
        // Processes still exiting: the cgroup cannot be removed until they are gone.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
