import { AllowEntryError, normaliseAllowEntry } from "../net/allow-list.js";
import { HTTP_METHODS, type HttpMethod } from "../sources/http/http-tool.js";

/**
 * What a user tool may reach, granted in the toolset (issue 15): nothing unless granted. A
 * grant is data, normalised (`normaliseGrants`) so that two toolsets granting the same thing
 * spell it the same way and hash the same (grants are part of the toolset's content address).
 *
 * Invariants:
 * - `grantsProblems` names every malformed part; a normalised grant has none.
 * - An HTTP grant's path prefix is a decoded, plain path: it starts and ends with `/` (so
 *   `/v1/` never grants `/v10`), has no `..` or `.` segment, no `\`, no `%` (an encoded
 *   separator or dot would mean one thing here and another to a server that decodes it).
 */

export interface HttpGrant {
  /** A host as the `http` allow-list writes it: `api.example.com`, `*.example.com`. */
  readonly host: string;
  /** Requests must be under this path: `/v1/`. Default `/` (the whole host). */
  readonly pathPrefix?: string;
  /** Methods allowed. Default GET only. */
  readonly methods?: readonly HttpMethod[];
}

export interface UserToolGrants {
  /** Where `fetch` may go; absent: the tool has no `fetch` at all. */
  readonly http?: readonly HttpGrant[];
  /** Credential names the tool may name in `fetch(url, { credential })`; the engine injects their values, the tool never sees them. */
  readonly secrets?: readonly string[];
  /** The namespace's workspace: `ro` (read, list) or `rw` (read, write, list). Absent: none. */
  readonly workspace?: "ro" | "rw";
  /** Other tools of the toolset it may call, as `group.name`. Absent: none. */
  readonly tools?: readonly string[];
}

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_.-]*$/;

/** What is wrong with `grants` (empty when nothing is), each naming the field. */
export function grantsProblems(grants: UserToolGrants): readonly string[] {
  const problems: string[] = [];
  (grants.http ?? []).forEach((grant, index) => {
    const at = `http[${index}]`;
    try {
      normaliseAllowEntry(grant.host);
    } catch (error) {
      if (!(error instanceof AllowEntryError)) throw error;
      problems.push(`${at}.host: ${error.message}`);
    }
    const problem = prefixProblem(grant.pathPrefix ?? "/");
    if (problem !== undefined) problems.push(`${at}.pathPrefix: ${problem}`);
    for (const method of grant.methods ?? []) {
      if (!(HTTP_METHODS as readonly string[]).includes(method.toUpperCase()))
        problems.push(`${at}.methods: "${method}" is not one of ${HTTP_METHODS.join(", ")}`);
    }
  });
  for (const name of grants.secrets ?? []) if (!SECRET_NAME.test(name)) problems.push(`secrets: "${name}" is not a credential name (letters, digits, _ . -)`);
  if (grants.secrets !== undefined && grants.secrets.length > 0 && (grants.http ?? []).length === 0)
    problems.push("secrets: a secret can only be sent with fetch; grant http too, or leave secrets out");
  if (grants.workspace !== undefined && grants.workspace !== "ro" && grants.workspace !== "rw")
    problems.push(`workspace: "${grants.workspace as string}" is not ro or rw`);
  for (const name of grants.tools ?? []) if (!TOOL_NAME.test(name)) problems.push(`tools: "${name}" is not a tool name written group.name`);
  return problems;
}

function prefixProblem(prefix: string): string | undefined {
  if (!prefix.startsWith("/")) return `"${prefix}" must start with /`;
  if (prefix.includes("\\")) return `"${prefix}" contains "\\"; paths use /`;
  if (prefix.includes("%")) return `"${prefix}" contains "%": write the path decoded (an encoded / or . would mean something else to the server)`;
  if (/[?#\s]/.test(prefix)) return `"${prefix}" is a path only: no query, fragment or spaces`;
  if (prefix.split("/").some((segment) => segment === ".." || segment === ".")) return `"${prefix}" has a . or .. segment; write the path it means`;
  return undefined;
}

/**
 * The grants in one spelling: hosts as the allow-list writes them, prefixes ending in `/`,
 * methods upper case, sorted, lists sorted and without repeats, empty lists left out.
 * Call only on grants without problems.
 */
export function normaliseGrants(grants: UserToolGrants): UserToolGrants {
  const unique = <T>(items: readonly T[]): T[] => [...new Set(items)].sort();
  const http = (grants.http ?? [])
    .map((grant) => {
      const prefix = grant.pathPrefix ?? "/";
      return {
        host: normaliseAllowEntry(grant.host),
        pathPrefix: prefix.endsWith("/") ? prefix : `${prefix}/`,
        methods: unique((grant.methods ?? ["GET"]).map((method) => method.toUpperCase() as HttpMethod)),
      };
    })
    .sort((a, b) => (a.host + a.pathPrefix < b.host + b.pathPrefix ? -1 : a.host + a.pathPrefix > b.host + b.pathPrefix ? 1 : 0));
  return {
    ...(http.length > 0 ? { http } : {}),
    ...((grants.secrets ?? []).length > 0 ? { secrets: unique(grants.secrets ?? []) } : {}),
    ...(grants.workspace === undefined ? {} : { workspace: grants.workspace }),
    ...((grants.tools ?? []).length > 0 ? { tools: unique(grants.tools ?? []) } : {}),
  };
}
