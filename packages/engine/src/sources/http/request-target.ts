import type { ToolFailure } from "@tapedeck/protocol";
import { classifyAddress, parseCanonicalAddress, type AddressVerdict } from "../../net/address-ranges.js";
import { isAllowedHost, stripTrailingDot } from "../../net/allow-list.js";
import { refusal, RefusalRule } from "./refusal.js";

/**
 * Checks the URL of a request (or of a redirect) before anything is resolved or sent: one
 * parser (WHATWG's, Node's `URL`) decides what the host is, and every later step uses its
 * answer, so there is no second parser to disagree with (`http://a.com@127.0.0.1`,
 * `http://127.0.0.1#@a.com`, `0x7f.1`, `2130706433` all mean what `URL` says they mean).
 */

export type TargetCheck =
  /** The URL may be requested; `address` is set when its host is an IP literal (already checked). */
  { readonly ok: true; readonly url: URL; readonly host: string; readonly address?: string } | { readonly ok: false; readonly failure: ToolFailure };

export interface TargetPolicy {
  readonly allow: readonly string[];
  /** Test-only: loopback addresses pass the address check. */
  readonly allowLoopback: boolean;
}

/** Characters that make a URL mean different things to different parsers; WHATWG silently drops or rewrites them. */
const AMBIGUOUS = /[\u0000-\u0020\u007f\\]/;

const MAX_URL_CHARS = 8192;

export function checkTarget(raw: string, policy: TargetPolicy): TargetCheck {
  if (raw.length > MAX_URL_CHARS) return refused(RefusalRule.invalidUrl, `the URL is ${raw.length} characters long; at most ${MAX_URL_CHARS} are allowed.`);
  const ambiguous = AMBIGUOUS.exec(raw);
  if (ambiguous) {
    const what =
      ambiguous[0] === "\\" ? "a backslash" : `the control or space character U+${ambiguous[0].charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`;
    return refused(
      RefusalRule.ambiguousUrl,
      `the URL ${JSON.stringify(clip(raw))} contains ${what}, which URL parsers read differently; percent-encode it (e.g. %5C, %20) or remove it.`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refused(RefusalRule.invalidUrl, `${JSON.stringify(clip(raw))} is not an absolute URL; write one such as "https://api.github.com/repos/o/r".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return refused(RefusalRule.scheme, `the scheme "${url.protocol.slice(0, -1)}" is not allowed; only http and https are.`);
  }
  if (url.username !== "" || url.password !== "") {
    return refused(
      RefusalRule.credentials,
      `the URL carries a user name or password before "@" (its host is ${url.hostname}); credentials in URLs are refused. Pass them in a header instead.`,
      { host: url.hostname },
    );
  }
  const host = stripTrailingDot(url.hostname);
  if (host === "") return refused(RefusalRule.invalidUrl, `the URL ${JSON.stringify(clip(raw))} has no host.`);
  // What is sent: no fragment, and the name as the allow-list saw it (no trailing dot in Host or SNI).
  url.hash = "";
  if (host !== url.hostname) url.hostname = host;
  const literal = parseCanonicalAddress(host) !== undefined;
  if (literal) {
    const verdict = classifyAddress(host);
    if (!passes(verdict, policy)) return { ok: false, failure: addressRefusal(host, verdict, undefined) };
  }
  if (!isAllowedHost(host, policy.allow)) {
    const allowed = policy.allow.length === 0 ? "none" : policy.allow.join(", ");
    return refused(
      RefusalRule.hostNotAllowed,
      `the host ${host} is not in the toolset's http allow-list (${allowed}). Use an allowed host, or ask for the toolset's "http": { "allow": [...] } to include it.`,
      { host },
    );
  }
  return literal ? { ok: true, url, host, address: host.startsWith("[") ? host.slice(1, -1) : host } : { ok: true, url, host };
}

/** Whether the address check lets `verdict` through under `policy`. */
export function passes(verdict: AddressVerdict, policy: Pick<TargetPolicy, "allowLoopback">): boolean {
  return verdict.allowed || (policy.allowLoopback && verdict.loopback === true);
}

/** The refusal of a host whose address (its own, or one it resolves to) is in a refused range. */
export function addressRefusal(host: string, verdict: AddressVerdict, resolvedFrom: string | undefined): ToolFailure {
  if (verdict.allowed) throw new Error("addressRefusal called for an allowed address");
  const where = resolvedFrom === undefined ? `the address ${verdict.address}` : `the name ${resolvedFrom} resolves to ${verdict.address}, which`;
  // An embedding names its blocks in `range` already.
  const block = verdict.cidr === "-" || verdict.embedded !== undefined ? "" : ` (${verdict.cidr})`;
  return refusal(
    RefusalRule.address,
    `${where} is ${verdict.range}${block}; requests may only go to public addresses. Allowing the host does not change this.`,
    { host, address: verdict.address, range: verdict.range, ...(verdict.cidr === "-" ? {} : { cidr: verdict.cidr }) },
  );
}

function refused(rule: RefusalRule, message: string, details: Record<string, string> = {}): TargetCheck {
  return { ok: false, failure: refusal(rule, message, details) };
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
