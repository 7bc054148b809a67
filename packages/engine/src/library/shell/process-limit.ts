import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rmdir, writeFile } from "node:fs/promises";
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
 *   Where a memory cgroup can be made too (v1's `memory` hierarchy, or v2 with `memory`
 *   delegated), it bounds the memory of all the command's processes together
 *   (`totalMemoryBytes`: RLIMIT_AS bounds each process alone).
 *
 * Without util-linux's `prlimit` (and, for root, `setpriv`) the shell is not offered, and the
 * reason says what to install.
 */

export type ProcessLimit =
  /** RLIMIT_NPROC inside the sandbox's user namespace. */
  | { readonly kind: "rlimit"; readonly prlimit: string }
  /** A pids cgroup per command, made under `parent`; and a memory cgroup, where one can be made. */
  | { readonly kind: "cgroup"; readonly parent: string; readonly version: 1 | 2; readonly memory?: MemoryCgroupParent };

/** Where a command's memory cgroup is made: v1's `memory` hierarchy, or a v2 folder delegating the memory controller. */
export interface MemoryCgroupParent {
  readonly parent: string;
  readonly version: 1 | 2;
}

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
      if (!(await canMakeChild(candidate.parent, "pids.max", "8"))) continue;
      const memory = await memoryParent(candidate);
      return { ok: true, limit: memory === undefined ? candidate : { ...candidate, memory } };
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

/** A memory cgroup's parent: v1's hierarchy at our own memory cgroup, or, in v2, the pids cgroup's own parent if it delegates memory. */
async function memoryParent(pids: { readonly parent: string; readonly version: 1 | 2 }): Promise<MemoryCgroupParent | undefined> {
  if (pids.version === 2) {
    const delegated = /\bmemory\b/.test(readText(join(pids.parent, "cgroup.subtree_control")));
    return delegated && (await canMakeChild(pids.parent, "memory.max", String(64 * 1024 * 1024))) ? { parent: pids.parent, version: 2 } : undefined;
  }
  const own = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(\/.*)$/m.exec(readText("/proc/self/cgroup"))?.[1];
  if (own === undefined) return undefined;
  const parent = join("/sys/fs/cgroup/memory", own);
  return (await canMakeChild(parent, "memory.limit_in_bytes", String(64 * 1024 * 1024))) ? { parent, version: 1 } : undefined;
}

async function canMakeChild(parent: string, file: string, value: string): Promise<boolean> {
  const probe = join(parent, `tapedeck-probe-${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(probe);
    await writeFile(join(probe, file), value);
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
