import type { JsonValue } from "@tapedeck/protocol";
import type { Workspace } from "../library/files/workspace.js";
import type { KnownSecret } from "../secrets/leak-scanner.js";
import type { SubCall, SubCallAnswer, SubCallJournal } from "../sources/sub-call-journal.js";
import type { ToolOutcome } from "../sources/tool-source.js";

export type { SubCall, SubCallAnswer, SubCallJournal };

/**
 * The seams a user tool's call runs through, provided by the engine's wiring: how a host call
 * is performed (`UserToolHost`) and where its answer is recorded and found again on replay
 * (`SubCallJournal`). The runner never opens a connection, a vault or a journal itself.
 *
 * Invariants the wiring must keep:
 * - `fetch` sends through the `http` tool's rules (allow-list of the grant's hosts, SSRF checks,
 *   pinned address, limits), checks every hop with `within` before sending it, and injects the named credential after those checks, naming the
 *   values it sent in the outcome's `secrets` (as the http tool source does), so they are redacted.
 * - `invoke` calls the toolset's tool through the normal path (validation, policy, approval,
 *   rate limit) and answers its outcome.
 * - The sub-call key is the idempotency key of that host call: `{run}/{seq}.{n}`.
 */

export interface UserToolHost {
  /**
   * Sends `args` (`http.fetch`'s arguments, `credential` included when granted) under the `http`
   * tool's rules, with `within` as the request's `targetCheck`: every hop (redirects included) is
   * checked against the tool's grant before it is sent, so a redirect out of the grant is never
   * requested and never carries the credential.
   */
  fetch(args: JsonValue, key: string, signal: AbortSignal, within: (url: string, method: string) => string | undefined): Promise<ToolOutcome>;
  /** Calls the toolset's tool `name` (`group.name`, one the tool is granted). */
  invoke(name: string, args: JsonValue, key: string, signal: AbortSignal): Promise<ToolOutcome>;
  /** The namespace's workspace, when the tool is granted it (opened read-only for `ro`). */
  readonly workspace?: Workspace;
  /** Secret values to redact from everything the tool is given and gives back, on top of key shapes and what `fetch` reports. */
  readonly secrets?: readonly KnownSecret[];
}

/** The simplest `SubCallJournal`: in memory, for one process (tests, and `test_tool` dry runs). */
export class MemorySubCallJournal implements SubCallJournal {
  readonly calls = new Map<string, { readonly call: SubCall; readonly answer: SubCallAnswer }>();

  recorded(key: string): Promise<SubCallAnswer | undefined> {
    return Promise.resolve(this.calls.get(key)?.answer);
  }

  record(call: SubCall, answer: SubCallAnswer): Promise<void> {
    if (!this.calls.has(call.key)) this.calls.set(call.key, { call, answer });
    return Promise.resolve();
  }
}
