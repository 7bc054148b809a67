import { lstatSync, readlinkSync } from "node:fs";
import { SETPRIV } from "./process-limit.js";

/**
 * The bubblewrap command line of a sandboxed shell command. What the command can see and do:
 *
 * - Not root, anywhere: it runs in a user namespace of its own (`--unshare-user`) as uid and gid
 *   65534 (`nobody`), mapped to an unprivileged uid of the host: the engine's own uid, or, when
 *   the engine runs as root, the sandbox user (`rootWrapperArgs`); it cannot make further user
 *   namespaces (`--disable-userns`), so it can never gain capabilities in one.
 * - No network: `--unshare-all` gives it new network, PID, IPC, UTS and cgroup namespaces; its
 *   network has only a loopback that nothing else shares.
 * - A read-only system: `/usr` (and the `/bin`, `/lib`… that point into it) bound read-only, a
 *   handful of `/etc` files programs need to start (never `/etc` whole: it holds the host's
 *   secrets), its own `/proc` with `/proc/sys`, `/proc/sysrq-trigger`, `/proc/irq` and `/proc/bus`
 *   read-only (kernel settings cannot be written even where permissions would let them), a
 *   minimal `/dev`, and then `/` remounted read-only.
 * - Only the workspace writable (read-only for a `ro` workspace), at `/workspace`, the working
 *   folder; a fresh, empty `/tmp` of `tmpBytes` that disappears with the command.
 * - An environment of its own (`--clearenv`): a safe PATH, HOME and TMPDIR in /tmp, LANG.
 * - A seccomp filter refusing system calls it has no use for (`seccomp-filter.ts`), on x86_64 and
 *   aarch64.
 * - No capabilities (`--cap-drop ALL`, even when the engine runs as root), its own session (so it
 *   cannot push keystrokes into a terminal), and it dies with the engine (`--die-with-parent`).
 */

/** Where the workspace appears inside the sandbox. */
export const SANDBOX_WORKSPACE = "/workspace";

/** The uid and gid a command has inside its user namespace: `nobody`, which /etc/passwd names. */
export const SANDBOX_ID = 65534;

/** Parts of /proc that are kernel settings or switches rather than information: bound read-only over themselves. */
const PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];

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
  /** Size of the command's /tmp, bytes. */
  readonly tmpBytes: number;
  /** The descriptor bubblewrap reads the seccomp filter from (`seccomp-filter.ts`), if there is one. */
  readonly seccompFd?: number;
  /** What runs inside, as an argument vector (`/bin/sh -c …`, possibly behind `prlimit`). */
  readonly command: readonly string[];
}

export function bubblewrapArgs({ workspace, writable, tmpBytes, seccompFd, command }: SandboxLayout): string[] {
  const args = ["--unshare-all", "--unshare-user", "--uid", String(SANDBOX_ID), "--gid", String(SANDBOX_ID), "--disable-userns"];
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox", ...systemArgs());
  args.push("--proc", "/proc");
  for (const path of PROC_READ_ONLY) args.push("--ro-bind-try", path, path);
  args.push("--dev", "/dev", "--size", String(tmpBytes), "--tmpfs", "/tmp");
  args.push(writable ? "--bind" : "--ro-bind", workspace, SANDBOX_WORKSPACE, "--chdir", SANDBOX_WORKSPACE);
  args.push("--remount-ro", "/", "--clearenv");
  for (const [name, value] of Object.entries(ENVIRONMENT)) args.push("--setenv", name, value);
  if (seccompFd !== undefined) args.push("--seccomp", String(seccompFd));
  args.push("--", ...command);
  return args;
}

/**
 * When the engine runs as root, bubblewrap must not: a user namespace it makes maps the command to
 * the host's uid 0 (whose files it then owns, and whose kernel settings it may write). So a first
 * bubblewrap, as root, makes a mount namespace holding only the system and the workspace (at
 * `SANDBOX_WORKSPACE`), gives the workspace's root-owned files to the sandbox user (the engine
 * writes them as root; the command must be able to change them), and becomes that user
 * (`setpriv`); the sandbox proper (`bubblewrapArgs`) is then made from there, unprivileged, over
 * `/workspace`. Done inside this namespace, the `chown` can reach nothing but the workspace and
 * the read-only system whatever links a command left in it (and `chown -R` walks by folder
 * descriptors, not following links). Its capabilities are those four steps' only.
 *
 * `/proc` is the host's (bound, not mounted): the sandbox can mount a proc of its own only over a
 * fully visible one. `inner` is the sandbox's bubblewrap command line, run after `--`.
 */
export function rootWrapperArgs(workspace: string, user: { readonly uid: number; readonly gid: number }, inner: readonly string[]): string[] {
  const args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  for (const cap of ["CAP_CHOWN", "CAP_DAC_READ_SEARCH", "CAP_SETUID", "CAP_SETGID"]) args.push("--cap-add", cap);
  args.push(...systemArgs(), "--bind", "/proc", "/proc", "--dev", "/dev", "--dir", "/tmp", "--bind", workspace, SANDBOX_WORKSPACE, "--clearenv");
  const script = `uid=$1 gid=$2; shift 2; chown -R -h --from=0 "$uid:$gid" ${SANDBOX_WORKSPACE} && exec ${SETPRIV} --reuid="$uid" --regid="$gid" --clear-groups -- "$@"`;
  args.push("--", "/bin/sh", "-c", script, "sh", String(user.uid), String(user.gid), ...inner);
  return args;
}

/** `/usr`, the top-level folders that point into it, and the few /etc files programs need, read-only. */
function systemArgs(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const folder of SYSTEM_FOLDERS) args.push(...systemFolder(folder));
  // Readable by anyone: bubblewrap would make the folder of a bound file owner-only.
  args.push("--perms", "0755", "--dir", "/etc");
  for (const file of ETC_FILES) args.push("--ro-bind-try", file, file);
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
