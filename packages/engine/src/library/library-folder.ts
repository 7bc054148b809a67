import { join } from "node:path";
import { sha256Hex } from "../util/ids.js";

/**
 * Where the built-in library keeps what it writes, under one folder (by default `library/` in the
 * store's data folder): a workspace per namespace (`workspaces/<namespace>/`, files and shell)
 * and the memory documents with their full-text index (`memory.db`, one SQLite file for every
 * namespace, rows keyed by namespace).
 *
 * Invariants:
 * - Two namespaces never share a workspace folder: a namespace that is a plain name keeps it
 *   (`n-<name>`), any other is hashed (`h-<sha256>`), and runs without a namespace use `default`;
 *   the prefixes keep the three kinds apart.
 * - Everything is local to the machine: engines on one data folder share it; several nodes on
 *   one PostgreSQL store each have their own (see docs/design/tool-library.md).
 */

/** Namespaces kept readable as folder names. */
const PLAIN_NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;

/** The folder of the workspace of `namespace`. */
export function workspaceFolder(folder: string, namespace: string | undefined): string {
  const name = namespace === undefined ? "default" : PLAIN_NAMESPACE.test(namespace) ? `n-${namespace}` : `h-${sha256Hex(namespace).slice(0, 32)}`;
  return join(folder, "workspaces", name);
}

/** The SQLite file of the memory documents and their index. */
export function memoryDatabase(folder: string): string {
  return join(folder, "memory.db");
}

/** Why a group that keeps files cannot be enabled on an engine without a library folder. */
export function noLibraryFolder(group: string): string {
  return (
    `the ${group} group keeps files (workspaces, the memory index) in a folder, and this engine has none: its store has no data folder ` +
    "(a memory: store or a database URL). Open the engine with libraryFolder (EngineOptions), or on a data folder; tapedeck serve keeps it in library/ of its --data folder"
  );
}
