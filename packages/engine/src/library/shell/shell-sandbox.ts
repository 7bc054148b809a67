import { spawn } from "node:child_process";
import { bubblewrapArgs, rootWrapperArgs, SANDBOX_ID, SANDBOX_WORKSPACE } from "./bubblewrap-args.js";
import { CommandCgroup } from "./command-cgroup.js";
import { PRLIMIT, type ProcessLimit } from "./process-limit.js";
import { seccompBytes } from "./seccomp-filter.js";
import { prlimitOptions, shellLimits, type ShellLimits } from "./shell-limits.js";

/**
 * Runs one shell command in a bubblewrap sandbox over a workspace (see `bubblewrap-args.ts` for
 * what the command sees), bounded in time, output, processes, memory and disk.
 *
 * Invariants:
 * - Time: past `timeoutMs` (or when `signal` aborts) the sandbox is killed — bubblewrap's
 *   process group with SIGKILL, and with it the sandbox's PID namespace, whose every process the
 *   kernel kills when its first process dies; in cgroup mode every process of the cgroup too.
 * - Output: at most `maxStdoutBytes` of stdout and `maxStderrBytes` of stderr are kept (the
 *   rest is counted and reported as omitted); past `OUTPUT_KILL_BYTES` in all the command is
 *   killed, since nothing more of it would be kept anyway.
 * - Processes: at most `maxProcesses` at once (`process-limit.ts`): a fork bomb stalls at the
 *   bound until the time limit ends it. Memory, file sizes, open files and CPU time: the
 *   rlimits of `shell-limits.ts`, set inside the sandbox before the command starts.
 * - Never the host's root: as the engine's own uid, or, when the engine is root, as `user`.
 * - The command never gets the engine's environment, files outside its workspace, or a network.
 */

export interface ShellSandboxOptions {
  /** How processes are bounded here (`chooseProcessLimit`). */
  readonly processLimit: ProcessLimit;
  /** Default `/usr/bin/bwrap`. */
  readonly bwrap?: string;
  /** What each command may use (`shell-limits.ts`; each field has its default). */
  readonly limits?: Partial<ShellLimits>;
  /**
   * The host uid and gid commands run as when the engine runs as root (otherwise they run as the
   * engine's own uid). Default 65534:65534 (`nobody`); better, a uid of its own that owns nothing
   * else. The workspace's files are given to it before each command (`rootWrapperArgs`), and it
   * must be able to enter the folders above the workspace (search permission, `x`).
   */
  readonly user?: { readonly uid: number; readonly gid: number };
  /** Default 64 KiB. */
  readonly maxStdoutBytes?: number;
  /** Default 32 KiB. */
  readonly maxStderrBytes?: number;
}

export interface ShellRequest {
  readonly command: string;
  /** The workspace folder on the host (resolved). */
  readonly workspace: string;
  readonly writable: boolean;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface ShellRun {
  /** The command's exit code; null when it was killed. */
  readonly exitCode: number | null;
  /** The signal that ended it, if one did. */
  readonly signal: string | null;
  /** Why Tapedeck stopped it, when it did. */
  readonly stopped?: "timeout" | "output" | "aborted";
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutOmittedBytes: number;
  readonly stderrOmittedBytes: number;
  /** A fork was refused because the command had `maxProcesses` already (known in cgroup mode). */
  readonly processLimitReached?: boolean;
  /** The kernel killed a process for the memory of all the command's processes together (known where there is a memory cgroup). */
  readonly memoryLimitReached?: boolean;
  readonly durationMs: number;
}

export const DEFAULT_BWRAP = "/usr/bin/bwrap";
export const DEFAULT_MAX_STDOUT_BYTES = 64 * 1024;
export const DEFAULT_MAX_STDERR_BYTES = 32 * 1024;
/** Output read (and thrown away) before a command that only prints is stopped: `yes` would otherwise run to its time limit. */
export const OUTPUT_KILL_BYTES = 16 * 1024 * 1024;

/** The seccomp filter, for the architectures it knows (elsewhere it would refuse every system call, so there is none). */
const SECCOMP = process.arch === "x64" || process.arch === "arm64" ? seccompBytes() : undefined;
/** The descriptor bubblewrap reads it from: the first after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

/** Starts the sandbox inside the cgroups (their count, then their folders): the shell moves itself into each, then becomes bubblewrap. */
const ENTER_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

export class ShellSandbox {
  readonly #limit: ProcessLimit;
  readonly #bwrap: string;
  readonly #limits: ShellLimits;
  readonly #user: { readonly uid: number; readonly gid: number };
  readonly #maxStdout: number;
  readonly #maxStderr: number;

  constructor(options: ShellSandboxOptions) {
    this.#limit = options.processLimit;
    this.#bwrap = options.bwrap ?? DEFAULT_BWRAP;
    this.#limits = shellLimits(options.limits);
    this.#user = sandboxUser(options.user);
    this.#maxStdout = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
    this.#maxStderr = options.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES;
  }

  get limits(): ShellLimits & { readonly maxStdoutBytes: number; readonly maxStderrBytes: number } {
    return { ...this.#limits, maxStdoutBytes: this.#maxStdout, maxStderrBytes: this.#maxStderr };
  }

  async run(request: ShellRequest): Promise<ShellRun> {
    const args = this.#args(request);
    const cgroup = this.#limit.kind === "cgroup" ? await CommandCgroup.create(this.#limit, this.#limits) : undefined;
    try {
      if (cgroup === undefined) return await this.#spawn(this.#bwrap, args, request);
      const paths = cgroup.paths;
      const run = await this.#spawn("/bin/sh", ["-c", ENTER_CGROUPS, "sh", String(paths.length), ...paths, this.#bwrap, ...args], request);
      const events = await cgroup.events();
      return {
        ...run,
        ...(events.processLimitReached ? { processLimitReached: true } : {}),
        ...(events.memoryLimitReached ? { memoryLimitReached: true } : {}),
      };
    } finally {
      await cgroup?.remove();
    }
  }

  /** bubblewrap's arguments: the sandbox itself, or, for an engine running as root, behind the root wrapper. */
  #args({ command, workspace, writable }: ShellRequest): string[] {
    const inside = [PRLIMIT, ...prlimitOptions(this.#limits), "--", "/bin/sh", "-c", command];
    const layout = { writable, tmpBytes: this.#limits.tmpBytes, command: inside, ...(SECCOMP === undefined ? {} : { seccompFd: SECCOMP_FD }) };
    if (process.getuid?.() !== 0) return bubblewrapArgs({ ...layout, workspace });
    const sandbox = bubblewrapArgs({ ...layout, workspace: SANDBOX_WORKSPACE });
    return rootWrapperArgs(workspace, this.#user, [this.#bwrap, ...sandbox]);
  }

  #spawn(file: string, argv: readonly string[], request: ShellRequest): Promise<ShellRun> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      // Its own process group (detached), so that one kill reaches bubblewrap and what it started.
      // The filter goes through a pipe, passed down to the sandbox's bubblewrap (through the root wrapper, for root), which reads it to its end.
      const child = spawn(file, argv, { detached: true, stdio: ["ignore", "pipe", "pipe", SECCOMP === undefined ? "ignore" : "pipe"], env: {} });
      const filter = child.stdio[SECCOMP_FD];
      if (SECCOMP !== undefined && filter !== null && filter !== undefined && "end" in filter) {
        // The sandbox may die before reading it (a command stopped at once): that is no error of ours.
        filter.on("error", () => undefined);
        filter.end(SECCOMP);
      }
      const stdout = new Capped(this.#maxStdout);
      const stderr = new Capped(this.#maxStderr);
      let stopped: ShellRun["stopped"];
      const stop = (why: NonNullable<ShellRun["stopped"]>): void => {
        stopped ??= why;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // It has exited already.
        }
      };
      const onOutput = (capped: Capped) => (chunk: Buffer) => {
        capped.add(chunk);
        if (stdout.total + stderr.total > OUTPUT_KILL_BYTES) stop("output");
      };
      // Pipes, as asked for above: never null.
      child.stdout?.on("data", onOutput(stdout));
      child.stderr?.on("data", onOutput(stderr));
      const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
      const abort = (): void => stop("aborted");
      if (request.signal.aborted) abort();
      else request.signal.addEventListener("abort", abort, { once: true });
      child.once("error", (error) => {
        clearTimeout(timer);
        request.signal.removeEventListener("abort", abort);
        reject(error);
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        request.signal.removeEventListener("abort", abort);
        resolve({
          exitCode: code,
          signal,
          ...(stopped === undefined ? {} : { stopped }),
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutOmittedBytes: stdout.omitted,
          stderrOmittedBytes: stderr.omitted,
          durationMs: Math.round(performance.now() - started),
        });
      });
    });
  }
}

/** The sandbox user, checked: it exists to not be root, so uid or gid 0 is a configuration error. */
function sandboxUser(user: { readonly uid: number; readonly gid: number } = { uid: SANDBOX_ID, gid: SANDBOX_ID }): {
  readonly uid: number;
  readonly gid: number;
} {
  for (const [name, id] of [
    ["uid", user.uid],
    ["gid", user.gid],
  ] as const) {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 0xfffffffe) {
      throw new Error(`The shell's sandbox user must have a ${name} other than root's: a positive integer below 4294967295, not ${String(id)}.`);
    }
  }
  return user;
}

/** The first `max` bytes of a stream, and how many more there were. */
class Capped {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  total = 0;

  constructor(private readonly max: number) {}

  add(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.max - this.#kept;
    if (room <= 0) return;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(kept);
    this.#kept += kept.length;
  }

  get omitted(): number {
    return this.total - this.#kept;
  }

  /** UTF-8; a character cut at the end is dropped rather than shown as U+FFFD. */
  text(): string {
    const bytes = Buffer.concat(this.#chunks);
    let end = bytes.length;
    if (this.omitted > 0) {
      let start = end - 1;
      while (start > 0 && start > end - 4 && (bytes[start]! & 0xc0) === 0x80) start--;
      const lead = bytes[start] ?? 0;
      const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (start + size > end) end = start;
    }
    return bytes.subarray(0, end).toString("utf8");
  }
}
