import { isAllowedHost } from "../net/allow-list.js";
import type { HttpGrant } from "../toolset/user-tool-grants.js";

/**
 * Whether a user tool's request is inside its HTTP grants (host, path prefix, method), judged on
 * the URL's text as the tool wrote it, before the `http` tool's own rules (allow-list, SSRF
 * checks, pinned address) apply to it as to any request.
 *
 * Invariants:
 * - Refused before parsing, because a parser would quietly turn them into something else: a
 *   `\` (WHATWG URLs read it as `/`), a `.` or `..` path segment (resolved away, possibly out of
 *   the prefix), an encoded separator, dot, NUL or `%` (`%2f`, `%5c`, `%2e`, `%00`, `%25`,
 *   which a server may decode into a traversal), and userinfo (`user@host`).
 * - Refused too, because some server decodes or normalises them into a traversal that the
 *   checked path does not show (Tomcat, IIS, .NET, proxies): a segment that is `.` or `..`
 *   before a `;` (path parameters: `/v1/..;/admin`), a `%u` escape (`%u002e`), percent-encoded
 *   bytes that are not UTF-8 (overlong `%c0%ae`, `%c0%af`; stray `%ff`), a path whose decoded
 *   text normalises (NFKC: full-width `．`, `／`, `＼`) into a dot segment or a backslash, and
 *   any control character, space or tab (parsers drop some of them: `.	./` is `../`).
 * - The prefix matches whole segments: `/v1/` grants `/v1` and `/v1/…`, never `/v10`.
 * - Every refusal says which rule, and what the grants allow.
 */

export type GrantCheck = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly reason: string };

const ENCODED = /%(2f|5c|2e|00|25)/i;

/** C0 controls, space, DEL, C1 controls. */
const CONTROL = /[\u0000-\u0020\u007f-\u009f]/;

/** IIS's `%uXXXX` escapes. */
const PERCENT_U = /%u[0-9a-f]{4}/i;

/**
 * What, in a raw path that passed the plain checks, some server would read as a traversal or a
 * separator: path parameters after a dot segment, `%u` escapes, percent-encoded bytes that are
 * not UTF-8 (overlong forms decode to `.` and `/` in lax decoders), and characters whose NFKC
 * form is a dot segment or a backslash. Undefined when none.
 */
function pathSpellingProblem(rawPath: string): string | undefined {
  const dotSegment = (segments: readonly string[]) => segments.some((segment) => /^\.{1,2}(;|$)/.test(segment));
  if (dotSegment(rawPath.split("/")))
    return 'its path has a "." or ".." segment with parameters (such as "..;"), which some servers resolve as ".."; write the path it means';
  if (PERCENT_U.test(rawPath))
    return "its path has a %u escape (such as %u002e), which some servers decode into a dot or separator; write the characters themselves";
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return "its path has percent-encoded bytes that are not UTF-8 (such as the overlong %c0%ae), which lax decoders read as a dot or separator; write the characters themselves";
  }
  const normalised = decoded.normalize("NFKC");
  if (normalised.includes("\\") || dotSegment(normalised.split("/")))
    return 'its path holds characters that normalise (Unicode NFKC, as some servers do) into a "." or ".." segment or a "\\" (such as the full-width "．" or "／"); write the path in plain characters';
  return undefined;
}

/** Checks `rawUrl` with `method` against `grants` (already normalised). */
export function checkHttpGrant(grants: readonly HttpGrant[], rawUrl: string, method: string): GrantCheck {
  const refuse = (why: string): GrantCheck => ({ ok: false, reason: `The request ${method} ${JSON.stringify(rawUrl)} is refused: ${why}.` });
  if (grants.length === 0) return refuse("this tool has no HTTP grant, so it cannot reach the network");
  if (CONTROL.test(rawUrl))
    return refuse("the URL contains a control character, space or tab, which URL parsers drop or keep as they please; percent-encode a space as %20");
  if (rawUrl.includes("\\")) return refuse('the URL contains "\\", which URL parsers read as "/"; write "/"');
  if (ENCODED.test(rawUrl)) return refuse("the URL contains a percent-encoded separator, dot, NUL or % (such as %2f or %2e); write the characters themselves");
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return refuse("it is not an absolute URL (https://host/path)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return refuse(`the scheme ${url.protocol} is not http or https`);
  if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(rawUrl))
    return refuse("the URL carries a user name or password; use a credential instead");
  const rawPath = /^[a-z]+:\/\/[^/?#]*([^?#]*)/i.exec(rawUrl)?.[1] ?? "";
  if (rawPath.split("/").some((segment) => segment === "." || segment === ".."))
    return refuse('its path has a "." or ".." segment, which would be resolved away; write the path it means');
  const spelling = pathSpellingProblem(rawPath);
  if (spelling !== undefined) return refuse(spelling);
  const upper = method.toUpperCase();
  const path = url.pathname;
  const hostGrants = grants.filter((grant) => isAllowedHost(url.hostname, [grant.host]));
  if (hostGrants.length === 0) return refuse(`the host ${url.hostname} is not granted (granted: ${describe(grants)})`);
  const pathGrants = hostGrants.filter((grant) => underPrefix(path, grant.pathPrefix ?? "/"));
  if (pathGrants.length === 0) return refuse(`the path ${path} is not under a granted prefix of ${url.hostname} (granted: ${describe(hostGrants)})`);
  if (!pathGrants.some((grant) => (grant.methods ?? ["GET"]).includes(upper as never)))
    return refuse(`the method ${upper} is not granted for ${url.hostname}${path} (granted: ${describe(pathGrants)})`);
  return { ok: true, url };
}

function underPrefix(path: string, prefix: string): boolean {
  const withSlash = prefix.endsWith("/") ? prefix : `${prefix}/`;
  return path.startsWith(withSlash) || `${path}/` === withSlash;
}

function describe(grants: readonly HttpGrant[]): string {
  return grants.map((grant) => `${(grant.methods ?? ["GET"]).join("|")} ${grant.host}${grant.pathPrefix ?? "/"}`).join(", ");
}
