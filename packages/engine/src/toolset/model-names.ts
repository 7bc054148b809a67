import { sha256Hex } from "../util/ids.js";

/**
 * Names of tools as a model's API accepts them (`^[A-Za-z0-9_-]{1,64}$`: Anthropic's and
 * OpenAI's rule), for agents that call tools directly. Scripts keep the servers' own names; the
 * server always gets its original name. Rewriting never makes two tools share a name: a name
 * that would collide, or that had to be cut, gets a short hash of the original.
 */
const VALID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX = 64;

/** `reserved`: names no tool may get (a caller's own tools, such as direct mode's `tool_find`). */
export function modelFacingNames(tools: readonly { readonly group: string; readonly name: string }[], reserved: Iterable<string> = []): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>(reserved);
  // Names already valid keep their spelling first, so a rewritten one never takes theirs.
  const wanted = tools.map((tool) => ({ path: `${tool.group}.${tool.name}`, candidate: `${tool.group}_${tool.name}` }));
  for (const { path, candidate } of wanted) {
    if (VALID.test(candidate) && !taken.has(candidate)) {
      names.set(path, candidate);
      taken.add(candidate);
    }
  }
  for (const { path, candidate } of wanted) {
    if (names.has(path)) continue;
    let name = sanitize(candidate);
    // Rewritten, cut (too long), or taken: a short hash of the original keeps it apart.
    if (taken.has(name) || name !== candidate || name.length > MAX) name = withHash(name, path);
    for (let salt = 1; taken.has(name); salt++) name = withHash(sanitize(candidate), `${path}#${salt}`);
    names.set(path, name);
    taken.add(name);
  }
  return names;
}

function sanitize(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return cleaned.length > 0 ? cleaned : "tool";
}

function withHash(name: string, original: string): string {
  const hash = sha256Hex(original).slice(0, 8);
  return `${name.slice(0, MAX - hash.length - 1)}_${hash}`;
}
