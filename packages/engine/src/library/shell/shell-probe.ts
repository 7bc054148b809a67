import { constants } from "node:fs";
import { access, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workspaceSupport } from "../files/workspace.js";
import { SANDBOX_ID } from "./bubblewrap-args.js";
import { chooseProcessLimit, type ProcessLimit } from "./process-limit.js";
import { DEFAULT_BWRAP, ShellSandbox, type ShellSandboxOptions } from "./shell-sandbox.js";

/**
 * Whether shell commands can be sandboxed here, and the sandbox if so. The shell tool is
 * offered only when this says yes; otherwise registration reports the reason, which says what
 * to install or change. It checks everything a command needs — bubblewrap, a way to bound
 * processes, workspaces — and then starts a real sandbox, since only that proves namespaces
 * can be made here (a container's seccomp profile, a disabled sysctl, …).
 */

export type ShellProbe =
  /** `startMs`: how long the probe's sandboxed `echo` took, start to exit. */
  | { readonly ok: true; readonly sandbox: ShellSandbox; readonly processLimit: ProcessLimit; readonly startMs: number }
  | { readonly ok: false; readonly reason: string };

/** How the shell's sandbox is set up: everything but how processes are bounded, which the probe finds. */
export type ShellSetup = Omit<ShellSandboxOptions, "processLimit">;

export async function probeShell(options: ShellSetup = {}): Promise<ShellProbe> {
  const bwrap = options.bwrap ?? DEFAULT_BWRAP;
  try {
    await access(bwrap, constants.X_OK);
  } catch {
    return { ok: false, reason: `The shell tool needs bubblewrap at ${bwrap}, which is missing or not executable: install Debian's bubblewrap package.` };
  }
  const workspaces = workspaceSupport();
  if (!workspaces.ok) return { ok: false, reason: workspaces.reason };
  const limit = await chooseProcessLimit();
  if (!limit.ok) return { ok: false, reason: `The shell tool cannot bound the processes of a command: ${limit.reason}.` };
  const sandbox = new ShellSandbox({ ...options, processLimit: limit.limit });
  const folder = await realpath(await mkdtemp(join(tmpdir(), "tapedeck-shell-probe-")));
  try {
    const run = await sandbox.run({ command: "echo ok", workspace: folder, writable: true, timeoutMs: 10_000, signal: new AbortController().signal });
    if (run.exitCode === 0 && run.stdout === "ok\n") return { ok: true, sandbox, processLimit: limit.limit, startMs: run.durationMs };
    const said = run.stderr.trim() || `exit ${run.exitCode ?? run.signal}`;
    return { ok: false, reason: `bubblewrap cannot start a sandbox here (${said})${hint(said, options)}.` };
  } catch (error) {
    return { ok: false, reason: `bubblewrap cannot be started: ${(error as Error).message}.` };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function hint(said: string, { user = { uid: SANDBOX_ID, gid: SANDBOX_ID } }: ShellSetup): string {
  if (/Can't (chdir to|find source path|get type of source)/.test(said)) {
    return process.getuid?.() === 0
      ? `: commands run as uid ${user.uid}, which must be able to enter every folder above the workspace (search permission, x)`
      : ": the workspace folder cannot be reached";
  }
  if (/namespace|Operation not permitted|Permission denied/i.test(said)) {
    return ": user namespaces may be disabled (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone) or forbidden by a container's seccomp profile";
  }
  return "";
}
