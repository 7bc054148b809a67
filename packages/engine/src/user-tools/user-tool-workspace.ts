import { join } from "node:path";
import { sha256Hex } from "../util/ids.js";

/**
 * Where a namespace's workspace is, for the user tools granted one: the same folder as the
 * built-in library's files tools (`library/workspaces/<namespace>/` under the data folder), so a
 * user tool and `files.read` see the same files. Two namespaces never share one: a plain name
 * keeps it (`n-<name>`), any other is hashed (`h-<sha256>`), runs without one use `default`.
 */

const PLAIN_NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;

export function userToolWorkspaceFolder(dataFolder: string, namespace: string | undefined): string {
  const name = namespace === undefined ? "default" : PLAIN_NAMESPACE.test(namespace) ? `n-${namespace}` : `h-${sha256Hex(namespace).slice(0, 32)}`;
  return join(dataFolder, "library", "workspaces", name);
}
