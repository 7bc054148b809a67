import { lstatSync, readlinkSync } from "node:fs";

/**
 * The bubblewrap command line of a sandboxed shell command. What the command can see and do:
 *
 * - No network: `--unshare-all` gives it new network, PID, IPC, UTS and cgroup namespaces (and a
 *   user namespace where it can); its network has only a loopback that nothing else shares.
 * - A read-only system: `/usr` (and the `/bin`, `/lib`… that point into it) bound read-only, a
 *   handful of `/etc` files programs need to start (never `/etc` whole: it holds the host's
 *   secrets), its own `/proc` and a minimal `/dev`, and then `/` remounted read-only.
 * - Only the workspace writable (read-only for a `ro` workspace), at `/workspace`, the working
 *   folder; a fresh, empty `/tmp` that disappears with the command.
 * - An environment of its own (`--clearenv`): a safe PATH, HOME and TMPDIR in /tmp, LANG.
 * - No capabilities (`--cap-drop ALL`, even when the engine runs as root), its own session (so it
 *   cannot push keystrokes into a terminal), and it dies with the engine (`--die-with-parent`).
 */

/** Where the workspace appears inside the sandbox. */
export const SANDBOX_WORKSPACE = "/workspace";

/** Top-level folders that hold programs and libraries: bound read-only, or re-created as the links they are. */
const SYSTEM_FOLDERS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** What of /etc programs need to start: the loader's cache, `alternatives` (awk, editor…), user names, the time zone. */
const ETC_FILES = [
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/mime.types",
];

const ENVIRONMENT: Readonly<Record<string, string>> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  PWD: SANDBOX_WORKSPACE,
};

export interface SandboxLayout {
  /** The workspace folder on the host (resolved). */
  readonly workspace: string;
  readonly writable: boolean;
  /** What runs inside, as an argument vector (`/bin/sh -c …`, possibly behind `prlimit`). */
  readonly command: readonly string[];
}

export function bubblewrapArgs({ workspace, writable, command }: SandboxLayout): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"];
  for (const folder of SYSTEM_FOLDERS) args.push(...systemFolder(folder));
  for (const file of ETC_FILES) args.push("--ro-bind-try", file, file);
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  args.push(writable ? "--bind" : "--ro-bind", workspace, SANDBOX_WORKSPACE, "--chdir", SANDBOX_WORKSPACE);
  args.push("--remount-ro", "/", "--clearenv");
  for (const [name, value] of Object.entries(ENVIRONMENT)) args.push("--setenv", name, value);
  args.push("--", ...command);
  return args;
}

function systemFolder(folder: string): string[] {
  try {
    const stat = lstatSync(folder);
    if (stat.isSymbolicLink()) return ["--symlink", readlinkSync(folder), folder];
    if (stat.isDirectory()) return ["--ro-bind", folder, folder];
  } catch {
    // Not on this system.
  }
  return [];
}
