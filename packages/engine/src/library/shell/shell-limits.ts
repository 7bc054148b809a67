/**
 * What one shell command may use, and how each bound is applied. Every bound is per command and
 * set before the command starts, so that nothing it does can raise it:
 *
 * - Memory, file size, open files, processes and CPU time are rlimits set by `prlimit` inside the
 *   sandbox (soft and hard alike, so the command cannot raise them; CPU time's hard limit is a
 *   second later, so that SIGXCPU comes first), just before `/bin/sh` starts.
 *   Memory is address space (RLIMIT_AS) per process: an allocation past it fails at once, as
 *   `malloc` returning NULL, which programs report as "Cannot allocate memory" or "out of memory".
 * - Where a memory cgroup can be made, the memory of all its processes together (`command-cgroup.ts`).
 * - `/tmp` is a tmpfs of `tmpBytes`: past it a write fails with "No space left on device".
 * - The workspace is written through the file-size bound (no one file past `fileSizeBytes`).
 *
 * A command stopped by a bound gets a note that names it (`limitNotes`).
 */

export interface ShellLimits {
  /** Address space of each process, bytes (RLIMIT_AS). Default 256 MiB. */
  readonly memoryBytes: number;
  /**
   * Memory of all the command's processes together, bytes, where a memory cgroup can be made (an
   * engine running as root with cgroup v1's memory hierarchy, or v2 delegating memory); the kernel
   * kills a process of the command past it. Default 512 MiB.
   */
  readonly totalMemoryBytes: number;
  /** Largest file a command may write, in the workspace or /tmp, bytes (RLIMIT_FSIZE). Default 64 MiB. */
  readonly fileSizeBytes: number;
  /** Size of the command's /tmp (a tmpfs), bytes. Default 64 MiB. */
  readonly tmpBytes: number;
  /** Processes at once (RLIMIT_NPROC in the sandbox's user namespace, and the pids cgroup where there is one). Default 256. */
  readonly maxProcesses: number;
  /** Open files per process (RLIMIT_NOFILE). Default 1024. */
  readonly maxOpenFiles: number;
  /** CPU time per process, seconds (RLIMIT_CPU). Default 600, the longest time limit a command may ask for. */
  readonly cpuSeconds: number;
}

const MiB = 1024 * 1024;

/**
 * Defaults: enough for compilers, test runners and scripting languages on a workspace; small
 * enough that several commands at once cannot take a server's memory or disk (256 MiB is 1/16 of
 * a 4 GiB machine; a 64 MiB file is larger than any source file and far smaller than a disk).
 */
export const DEFAULT_SHELL_LIMITS: ShellLimits = {
  memoryBytes: 256 * MiB,
  totalMemoryBytes: 512 * MiB,
  fileSizeBytes: 64 * MiB,
  tmpBytes: 64 * MiB,
  maxProcesses: 256,
  maxOpenFiles: 1024,
  cpuSeconds: 600,
};

/** The limits with `overrides` applied; throws (a configuration error) for a bound that is not a positive integer. */
export function shellLimits(overrides: Partial<ShellLimits> = {}): ShellLimits {
  const limits = { ...DEFAULT_SHELL_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`The shell's limit ${name} must be a positive integer, not ${String(value)}.`);
  }
  return limits;
}

/** `prlimit`'s options for the limits (a single value sets the soft and the hard limit). */
export function prlimitOptions(limits: ShellLimits): string[] {
  return [
    `--as=${limits.memoryBytes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.maxOpenFiles}`,
    `--nproc=${limits.maxProcesses}`,
    // The hard limit a second later: at the soft one the kernel sends SIGXCPU, which says why; at the hard one, only SIGKILL.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
  ];
}

/** What a finished command shows of having met a bound. */
export interface LimitEvidence {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderr: string;
  /** The pids cgroup refused a fork (known where there is one; elsewhere the shell's complaint says so). */
  readonly processLimitReached?: boolean;
  /** The command's memory cgroup killed a process (known where there is one). */
  readonly memoryLimitReached?: boolean;
}

/** 128 + the signal's number: how /bin/sh reports a child killed by it. */
const SHELL_SIGXCPU = 128 + 24;
const SHELL_SIGXFSZ = 128 + 25;

/** Notes for the model on each bound the command ran into, naming the bound and what to do. */
export function limitNotes(ran: LimitEvidence, limits: ShellLimits): string[] {
  const notes: string[] = [];
  if (ran.signal === "SIGXFSZ" || ran.exitCode === SHELL_SIGXFSZ || /File (too large|size limit exceeded)/i.test(ran.stderr)) {
    notes.push(`A file reached the file-size limit of ${size(limits.fileSizeBytes)} and the write was stopped: write smaller files.`);
  }
  if (/Cannot allocate memory|out of memory|memory exhausted|MemoryError|bad_alloc|Out of memory/i.test(ran.stderr)) {
    notes.push(
      `The command ran out of memory: each process may use at most ${size(limits.memoryBytes)} of address space; use less (stream instead of loading whole files).`,
    );
  }
  if (ran.memoryLimitReached === true) {
    notes.push(
      `The kernel killed a process of the command: its processes together reached the memory limit of ${size(limits.totalMemoryBytes)}; use less memory or fewer processes at once.`,
    );
  }
  if (/No space left on device/i.test(ran.stderr)) {
    notes.push(
      `A disk filled up: /tmp holds at most ${size(limits.tmpBytes)}; keep large files in the workspace (each at most ${size(limits.fileSizeBytes)}).`,
    );
  }
  if (ran.signal === "SIGXCPU" || ran.exitCode === SHELL_SIGXCPU) {
    notes.push(`A process was stopped at the CPU time limit of ${limits.cpuSeconds} s.`);
  }
  if (ran.processLimitReached === true || /fork: (retry: )?Resource temporarily unavailable|Cannot fork/i.test(ran.stderr)) {
    notes.push(`It reached the limit of ${limits.maxProcesses} processes: some could not be started.`);
  }
  if (/Too many open files/i.test(ran.stderr)) notes.push(`A process reached the limit of ${limits.maxOpenFiles} open files.`);
  return notes;
}

function size(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}
