import { findKeyShapes } from "../secrets/key-shapes.js";

/**
 * Finds secrets written literally into what a toolset stores. A toolset is content-addressed
 * and stored as written, and every caller in its reach may read it (`GET /v1/toolsets/:id`),
 * so it must hold no secret: a credential goes in the vault, or in Tapedeck's environment as a
 * `${NAME}` reference that is expanded when connecting and never stored.
 *
 * Values are judged by their shape, whatever key holds them (key names are checked too, in
 * `mcp-servers-file.ts`): the key shapes the leak scanner knows (`key-shapes.ts`), a password in
 * a URL's user info (`postgresql://admin:hunter2@db`), and a URL's query parameter named like a
 * secret (`?api_key=…`). A value that is only `${NAME}` references there is not a secret.
 *
 * Invariants:
 * - A finding names where the secret is and what it looks like, never the value (nor a key that
 *   is itself secret-shaped: keys are judged before they become part of a path).
 * - Time linear in the size of what is scanned; the walk is iterative, so no depth overflows it.
 */

const REFERENCE_ONLY = /^(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$/;
/** Query parameters that carry credentials by convention (compared lower-case, `-` as `_`). */
const SECRET_PARAM =
  /^(?:access_token|refresh_token|id_token|token|api_key|apikey|key|secret|client_secret|password|passwd|pwd|auth|sig|signature|x_amz_signature|x_goog_signature)$/;
/** Where a URL's authority, or its query, ends. */
const URL_END = /[\s"'<>`]/;

/** What a literal secret in `text` looks like ("a github token"), or undefined when there is none. */
export function literalSecretIn(text: string): string | undefined {
  const shape = findKeyShapes(text)[0];
  if (shape) return `${/^[aeiou]/i.test(shape.label) ? "an" : "a"} ${shape.label}`;
  return urlSecret(text);
}

/** A password in the user info, or a secret-named query parameter, of any URL in `text`. */
function urlSecret(text: string): string | undefined {
  // Each authority ends at the next "/" (at the latest the next "://"), and a query is read only
  // past the end of the last one read: every character is looked at a bounded number of times.
  let queriesFrom = 0;
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    if (at === 0 || !/[A-Za-z0-9+.-]/.test(text[at - 1]!)) continue; // no scheme: not a URL
    let authorityEnd = at + 3;
    while (authorityEnd < text.length && !"/?#".includes(text[authorityEnd]!) && !URL_END.test(text[authorityEnd]!)) authorityEnd++;
    const authority = text.slice(at + 3, authorityEnd);
    const userinfo = authority.lastIndexOf("@") >= 0 ? authority.slice(0, authority.lastIndexOf("@")) : "";
    const colon = userinfo.indexOf(":");
    if (colon >= 0 && isLiteral(userinfo.slice(colon + 1))) return "a password in a URL's user info";
    if (authorityEnd < queriesFrom) continue;
    let end = authorityEnd;
    while (end < text.length && !URL_END.test(text[end]!)) end++;
    queriesFrom = end;
    const url = text.slice(authorityEnd, end);
    const query = url.indexOf("?");
    if (query < 0) continue;
    const hash = url.indexOf("#", query);
    for (const pair of url.slice(query + 1, hash < 0 ? url.length : hash).split("&")) {
      const eq = pair.indexOf("=");
      if (eq < 0) continue;
      const name = safeDecode(pair.slice(0, eq)).toLowerCase().replaceAll("-", "_");
      if (SECRET_PARAM.test(name) && isLiteral(safeDecode(pair.slice(eq + 1)))) return `a secret in a URL's query parameter "${name}"`;
    }
  }
  return undefined;
}

function isLiteral(value: string): boolean {
  return value !== "" && !REFERENCE_ONLY.test(value);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export interface LiteralSecretFinding {
  /** Where, as a path into the scanned value (`mcpServers.pg.env.DATABASE_URL`). */
  readonly path: string;
  /** A key (at `path`) is the secret, rather than a value. */
  readonly inKey: boolean;
  /** What it looks like: "a github token". */
  readonly looksLike: string;
}

/** The first literal secret in any string (or object key) of `value`, with where it is. */
export function findLiteralSecret(value: unknown, root: string): LiteralSecretFinding | undefined {
  const stack: { readonly path: string; readonly value: unknown }[] = [{ path: root, value }];
  while (stack.length > 0) {
    const { path, value: item } = stack.pop()!;
    if (typeof item === "string") {
      const looksLike = literalSecretIn(item);
      if (looksLike !== undefined) return { path, inKey: false, looksLike };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ path: `${path}[${i}]`, value: item[i] });
    } else if (typeof item === "object" && item !== null) {
      const entries = Object.entries(item);
      for (const [key] of entries) {
        const looksLike = literalSecretIn(key);
        if (looksLike !== undefined) return { path, inKey: true, looksLike };
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ path: pathTo(path, entries[i]![0]), value: entries[i]![1] });
    }
  }
  return undefined;
}

function pathTo(path: string, key: string): string {
  const segment = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return path === "" ? segment.replace(/^\./, "") : `${path}${segment}`;
}

/** What to do instead, for a secret found at `path` of a toolset file. */
function adviceFor(path: string): string {
  if (/^mcpServers\.[^.[]+\.(env|headers)\b/.test(path)) {
    return 'Write it as a reference to Tapedeck\'s environment, such as "${DATABASE_URL}" or "Bearer ${GITHUB_TOKEN}" (expanded when connecting, never stored; an unlimited key registers those), or, for a server reached by URL, name a vault credential ("credential": "NAME", set with tapedeck credentials set)';
  }
  if (/^mcpServers\.[^.[]+\.url\b/.test(path)) {
    return 'Keep the URL free of it: send the secret in "headers" as a reference to Tapedeck\'s environment ("Authorization": "Bearer ${TOKEN}"), or name a vault credential ("credential": "NAME")';
  }
  if (/^mcpServers\.[^.[]+\.(args|command|cwd)\b/.test(path)) {
    return 'Command lines are stored as written and never expanded: put the secret in "env" as a reference to Tapedeck\'s environment ("env": { "API_KEY": "${API_KEY}" }) and let the server read it from its environment';
  }
  return "That text is stored with the toolset and shown to everyone who uses it, the model included: remove the secret. A tool's credentials go in the vault (tapedeck credentials set) or in Tapedeck's environment, as ${NAME} references in an MCP server's env or headers";
}

/**
 * The message refusing a toolset that holds a literal secret, or undefined when it holds none.
 * `value` is a toolset file's content (or a part of one, under `root`).
 */
export function literalSecretRefusal(value: unknown, root = ""): string | undefined {
  const found = findLiteralSecret(value, root);
  if (!found) return undefined;
  const where = found.path === "" ? "the toolset" : found.path;
  const what = found.inKey
    ? `${where} has a key that looks like a secret (${found.looksLike})`
    : `${where} holds what looks like a secret (${found.looksLike})`;
  return `${what}. A toolset is stored as written and anyone who knows its id can read it, so it holds no secret; nothing was registered. ${adviceFor(found.path)}.`;
}
