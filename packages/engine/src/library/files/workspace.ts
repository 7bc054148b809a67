import { randomBytes } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, readdir, realpath, rename, unlink, type FileHandle } from "node:fs/promises";
import { join, relative } from "node:path";
import { checkWorkspacePath } from "./workspace-path.js";

/**
 * A workspace: the folder of one namespace (end user) that the files tools and the shell work
 * in. Everything that opens something in it goes through here.
 *
 * Invariants:
 * - A path is first checked as text (`checkWorkspacePath`), then resolved: symbolic links that
 *   stay inside are followed (`realpath`), one that leads outside is refused with `refused`.
 * - What is opened is what was checked (no TOCTOU): the resolved path is opened one folder at
 *   a time, each with O_NOFOLLOW relative to the folder opened before it (through
 *   `/proc/self/fd/N/name`, Linux's equivalent of `openat`), starting from the root. A link
 *   swapped in meanwhile is met as a link and refused, never followed. Without /proc there is
 *   no safe way to do this from Node (opening a whole path with O_NOFOLLOW checks its last
 *   segment only), so there are no workspaces: `workspaceSupport` says so, and the files tools
 *   are not offered.
 * - Files are opened O_NONBLOCK and must be regular files: a FIFO or a socket planted in the
 *   workspace cannot hang a read.
 * - Writes are atomic: a new file in the same folder (O_EXCL), written, fsynced, renamed over
 *   the target, and the folder fsynced; a reader sees the old content or the new, never a part.
 *   A `ro` workspace refuses every change with `read_only`.
 */

export type WorkspaceMode = "rw" | "ro";

export type WorkspaceFailureCode =
  /** The path is not allowed (traversal, encoded separators, a link leading out, …). */
  | "refused"
  /** Nothing is there. */
  | "not_found"
  /** It is there, but is a folder where a file was wanted, or the other way round, or something else. */
  | "wrong_type"
  /** The workspace is read-only. */
  | "read_only";

export interface WorkspaceFailure {
  readonly ok: false;
  readonly code: WorkspaceFailureCode;
  readonly message: string;
}

export interface OpenedFile {
  readonly ok: true;
  readonly file: FileHandle;
  /** The path relative to the workspace, as resolved (links inside followed). */
  readonly relative: string;
  readonly size: number;
  readonly mode: number;
}

export interface DirectoryEntry {
  readonly name: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  /** Files: their size in bytes. */
  readonly sizeBytes?: number;
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;
const FOLDER = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** New files: readable by all, as an editor would create them (the workspace folder itself is the owner's). */
const NEW_FILE_MODE = 0o644;

export class Workspace {
  /** The workspace folder, resolved (no links). */
  readonly root: string;
  readonly mode: WorkspaceMode;

  private constructor(root: string, mode: WorkspaceMode) {
    this.root = root;
    this.mode = mode;
  }

  /** The workspace at `root`, created (owner only) if it does not exist. Throws where `workspaceSupport` says there are none. */
  static async open(root: string, mode: WorkspaceMode): Promise<Workspace> {
    const support = workspaceSupport();
    if (!support.ok) throw new Error(support.reason);
    await mkdir(root, { recursive: true, mode: 0o700 });
    return new Workspace(await realpath(root), mode);
  }

  /** Opens a regular file for reading. The caller closes `file`. */
  async openFile(path: string): Promise<OpenedFile | WorkspaceFailure> {
    const resolved = await this.#resolve(path, false);
    if (!resolved.ok) return resolved;
    const { segments } = resolved;
    const folder = await this.#walk(segments.slice(0, -1), false, path);
    if (!folder.ok) return folder;
    try {
      const file = await this.#openIn(folder, segments.at(-1)!, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, path);
      if (!file.ok) return file;
      const stat = await file.handle.stat();
      if (!stat.isFile()) {
        await file.handle.close();
        return failure("wrong_type", `${path} is ${stat.isDirectory() ? "a folder" : "not a regular file"}; give the path of a file.`);
      }
      return { ok: true, file: file.handle, relative: segments.join("/"), size: stat.size, mode: stat.mode };
    } finally {
      await folder.handle.close();
    }
  }

  /** The entries of a folder (`""` or `.` is the workspace itself), unsorted; files with their size. */
  async list(path: string): Promise<{ readonly ok: true; readonly relative: string; readonly entries: readonly DirectoryEntry[] } | WorkspaceFailure> {
    const resolved = await this.#resolve(path, true);
    if (!resolved.ok) return resolved;
    const folder = await this.#walk(resolved.segments, false, path);
    if (!folder.ok) return folder;
    try {
      const entries: DirectoryEntry[] = [];
      for (const entry of await readdir(this.#pathOf(folder), { withFileTypes: true })) {
        const type = entry.isFile() ? "file" : entry.isDirectory() ? "directory" : entry.isSymbolicLink() ? "symlink" : "other";
        // lstat through the opened folder: never follows a link, never leaves the folder.
        const sizeBytes =
          type === "file"
            ? await lstat(this.#pathOf(folder, entry.name)).then(
                (stat) => stat.size,
                () => undefined,
              )
            : undefined;
        entries.push({ name: entry.name, type, ...(sizeBytes === undefined ? {} : { sizeBytes }) });
      }
      return { ok: true, relative: resolved.segments.join("/"), entries };
    } finally {
      await folder.handle.close();
    }
  }

  /** Replaces (or creates, with its missing folders) the file at `path` with `content`, atomically. */
  async write(
    path: string,
    content: string | Uint8Array,
  ): Promise<{ readonly ok: true; readonly relative: string; readonly created: boolean } | WorkspaceFailure> {
    if (this.mode === "ro") return readOnly(path);
    const resolved = await this.#resolve(path, false);
    if (!resolved.ok) return resolved;
    const { segments } = resolved;
    const name = segments.at(-1)!;
    const folder = await this.#walk(segments.slice(0, -1), true, path);
    if (!folder.ok) return folder;
    try {
      const existing = await this.#openIn(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, path);
      let mode = NEW_FILE_MODE;
      if (existing.ok) {
        const stat = await existing.handle.stat();
        await existing.handle.close();
        if (stat.isDirectory()) return failure("wrong_type", `${path} is a folder; a file cannot replace it.`);
        mode = stat.mode & 0o7777;
      } else if (existing.code !== "not_found") return existing;
      // Not named after the file: a name of 255 bytes leaves no room for a suffix.
      const temp = `.tapedeck-${randomBytes(8).toString("hex")}.tmp`;
      const file = await open(this.#pathOf(folder, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
      try {
        await file.writeFile(content);
        await file.chmod(mode);
        await file.sync();
      } catch (error) {
        await file.close();
        await unlink(this.#pathOf(folder, temp));
        throw error;
      }
      await file.close();
      await rename(this.#pathOf(folder, temp), this.#pathOf(folder, name));
      await folder.handle.sync();
      return { ok: true, relative: segments.join("/"), created: !existing.ok };
    } finally {
      await folder.handle.close();
    }
  }

  /** Removes the file at `path` (never a folder). */
  async remove(path: string): Promise<{ readonly ok: true; readonly relative: string } | WorkspaceFailure> {
    if (this.mode === "ro") return readOnly(path);
    const opened = await this.openFile(path);
    if (!opened.ok) return opened;
    await opened.file.close();
    const segments = opened.relative.split("/");
    const folder = await this.#walk(segments.slice(0, -1), false, path);
    if (!folder.ok) return folder;
    try {
      await unlink(this.#pathOf(folder, segments.at(-1)));
      await folder.handle.sync();
      return { ok: true, relative: opened.relative };
    } finally {
      await folder.handle.close();
    }
  }

  /**
   * The path's segments after following the links inside the workspace: the deepest part that
   * exists is resolved with realpath and must stay inside; the rest (to be created) is kept.
   */
  async #resolve(path: string, allowRoot: boolean): Promise<{ readonly ok: true; readonly segments: readonly string[] } | WorkspaceFailure> {
    const checked = checkWorkspacePath(path, { allowRoot });
    if (!checked.ok) return failure("refused", checked.reason);
    const { segments } = checked;
    for (let depth = segments.length; depth >= 0; depth--) {
      let real: string;
      try {
        real = await realpath(join(this.root, ...segments.slice(0, depth)));
      } catch (error) {
        if (isCode(error, "ENOENT", "ENOTDIR", "ELOOP")) continue;
        throw error;
      }
      if (real !== this.root && !real.startsWith(`${this.root}/`)) {
        return failure("refused", `The path ${JSON.stringify(path)} is refused: it goes through a symbolic link that leads outside the workspace.`);
      }
      const inside = relative(this.root, real);
      return { ok: true, segments: [...(inside === "" ? [] : inside.split("/")), ...segments.slice(depth)] };
    }
    return { ok: true, segments };
  }

  /** Opens the folders `segments` one by one from the root, with O_NOFOLLOW; creates missing ones with `create`. */
  async #walk(segments: readonly string[], create: boolean, path: string): Promise<Folder | WorkspaceFailure> {
    let folder: Folder = { ok: true, handle: await open(this.root, FOLDER) };
    for (const [index, segment] of segments.entries()) {
      const shown = segments.slice(0, index + 1).join("/");
      if (create) {
        try {
          await mkdir(this.#pathOf(folder, segment), { mode: 0o755 });
        } catch (error) {
          if (!isCode(error, "EEXIST")) {
            await folder.handle.close();
            if (isCode(error, "ENOTDIR")) return failure("wrong_type", `${shown.split("/").slice(0, -1).join("/")} is a file, not a folder (in ${path}).`);
            throw error;
          }
        }
      }
      const next = await this.#openIn(folder, segment, FOLDER, path, shown);
      await folder.handle.close();
      if (!next.ok) return next.code === "wrong_type" ? failure("wrong_type", `${shown} is not a folder (in ${path}).`) : next;
      folder = { ok: true, handle: next.handle };
    }
    return folder;
  }

  async #openIn(
    folder: Folder,
    name: string,
    flags: number,
    path: string,
    shown = path,
  ): Promise<{ readonly ok: true; readonly handle: FileHandle } | WorkspaceFailure> {
    try {
      return { ok: true, handle: await open(this.#pathOf(folder, name), flags) };
    } catch (error) {
      if (isCode(error, "ENOENT")) return failure("not_found", `Nothing is at ${shown}${shown === path ? "" : ` (in ${path})`}.`);
      if (isCode(error, "ELOOP")) return linkRefused(path);
      if (isCode(error, "ENOTDIR")) return (await this.#isLink(folder, name)) ? linkRefused(path) : failure("wrong_type", `${shown} is not a folder.`);
      if (isCode(error, "ENXIO")) return failure("wrong_type", `${shown} is not a regular file.`);
      throw error;
    }
  }

  async #isLink(folder: Folder, name: string): Promise<boolean> {
    try {
      return (await lstat(this.#pathOf(folder, name))).isSymbolicLink();
    } catch {
      return false;
    }
  }

  /** A name inside an opened folder, resolved through the folder's descriptor (never through its path). */
  #pathOf(folder: Folder, name?: string): string {
    const base = `/proc/self/fd/${folder.handle.fd}`;
    return name === undefined ? base : `${base}/${name}`;
  }
}

interface Folder {
  readonly ok: true;
  readonly handle: FileHandle;
}

/** Whether workspaces can be had here: they need Linux's /proc/self/fd (see the invariants). */
export function workspaceSupport(): { readonly ok: true } | { readonly ok: false; readonly reason: string } {
  if (existsSync("/proc/self/fd")) return { ok: true };
  return {
    ok: false,
    reason: "The files tools need Linux's /proc/self/fd to open workspace paths without following links swapped in meanwhile; this system has none.",
  };
}

function failure(code: WorkspaceFailureCode, message: string): WorkspaceFailure {
  return { ok: false, code, message };
}

function linkRefused(path: string): WorkspaceFailure {
  return failure(
    "refused",
    `The path ${JSON.stringify(path)} is refused: it is (or goes through) a symbolic link that leads outside the workspace, or that changed while it was opened.`,
  );
}

function readOnly(path: string): WorkspaceFailure {
  return failure("read_only", `The workspace is read-only: ${path} cannot be changed. The toolset enables files with mode "ro".`);
}

function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as { code?: unknown }).code as string);
}
