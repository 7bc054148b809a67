import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessLimit } from "./process-limit.js";

/**
 * The cgroups of one shell command (`process-limit.ts` says where they can be made): a pids
 * cgroup bounding its processes, and, where there is one, a memory cgroup bounding the memory of
 * all its processes together, without swap. In cgroup v2 both are one folder; in v1 they are
 * a folder in each hierarchy. The command enters them all before bubblewrap starts (so every
 * process it makes is in them), and they are emptied (every process killed) and removed after.
 */

export interface CommandBounds {
  readonly maxProcesses: number;
  readonly totalMemoryBytes: number;
}

/** What the kernel refused or did while the command ran. */
export interface CgroupEvents {
  /** A fork was refused at `maxProcesses`. */
  readonly processLimitReached: boolean;
  /** A process was killed by the kernel for the memory of the whole command. */
  readonly memoryLimitReached: boolean;
}

export class CommandCgroup {
  private constructor(
    private readonly pids: string,
    private readonly memory: { readonly path: string; readonly version: 1 | 2 } | undefined,
    private readonly version: 1 | 2,
  ) {}

  /** Every folder the command must enter (write its pid into `cgroup.procs`). */
  get paths(): readonly string[] {
    return this.memory === undefined || this.memory.path === this.pids ? [this.pids] : [this.pids, this.memory.path];
  }

  static async create(limit: Extract<ProcessLimit, { kind: "cgroup" }>, bounds: CommandBounds): Promise<CommandCgroup> {
    const name = `tapedeck-shell-${randomBytes(8).toString("hex")}`;
    const pids = join(limit.parent, name);
    await mkdir(pids);
    await writeFile(join(pids, "pids.max"), String(bounds.maxProcesses));
    const memory = limit.memory === undefined ? undefined : { path: join(limit.memory.parent, name), version: limit.memory.version };
    const made = new CommandCgroup(pids, memory, limit.version);
    if (memory === undefined) return made;
    try {
      if (memory.path !== pids) await mkdir(memory.path);
      const total = String(bounds.totalMemoryBytes);
      if (memory.version === 2) {
        await writeFile(join(memory.path, "memory.max"), total);
        // No swap: the bound is on memory, not on what can be pushed out of it.
        await writeIfPresent(join(memory.path, "memory.swap.max"), "0");
      } else {
        await writeFile(join(memory.path, "memory.limit_in_bytes"), total);
        // memory + swap, set after memory alone (the kernel refuses it below memory's limit).
        await writeIfPresent(join(memory.path, "memory.memsw.limit_in_bytes"), total);
      }
    } catch (error) {
      await made.remove();
      throw error;
    }
    return made;
  }

  async events(): Promise<CgroupEvents> {
    const pids = await readFile(join(this.pids, "pids.events"), "utf8").catch(() => "");
    const memory =
      this.memory === undefined
        ? ""
        : await readFile(join(this.memory.path, this.memory.version === 2 ? "memory.events" : "memory.oom_control"), "utf8").catch(() => "");
    return { processLimitReached: /^max [1-9]/m.test(pids), memoryLimitReached: /^oom_kill [1-9]/m.test(memory) };
  }

  /** Kills whatever is left in them and removes them; never throws (a cgroup left behind is only a folder). */
  async remove(): Promise<void> {
    for (const path of [...this.paths].reverse()) await emptyAndRemove(path, this.version);
  }
}

async function emptyAndRemove(path: string, version: 1 | 2): Promise<void> {
  // Killed processes take a few milliseconds to leave; the cgroup is given two seconds.
  for (let round = 0; round < 400; round++) {
    if (version === 2 && existsSync(join(path, "cgroup.kill"))) await writeFile(join(path, "cgroup.kill"), "1").catch(() => undefined);
    const pids = (await readFile(join(path, "cgroup.procs"), "utf8").catch(() => ""))
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
      await rmdir(path);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      // Processes still exiting: the cgroup cannot be removed until they are gone.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

async function writeIfPresent(path: string, value: string): Promise<void> {
  if (existsSync(path)) await writeFile(path, value);
}
