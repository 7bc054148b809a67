import type { CredentialScope, Store } from "@tapedeck/engine";
import { sees, type Scope } from "./scope.js";

/**
 * Which credentials a caller may set, list and delete. A credential is sent for every run of
 * its scope, so a caller may only hold one whose runs are all inside its own scope:
 *
 * - a toolset's own credential (every end user's runs): an unlimited scope only — an unlimited
 *   API key without a namespace header;
 * - an end user's credential (`toolset` + `namespace`): a scope without labels (the credential
 *   goes with all of that end user's runs, whatever their labels) whose namespace is that one,
 *   or none — so an end user's token or a key limited to a namespace manages its own;
 * - a run's own credential: any scope that sees the run.
 *
 * Outside that, a credential does not exist for the caller (list leaves it out, delete answers
 * the 404 of a missing one); `set` answers 403 for a scope the caller cannot place (as starting
 * a run in another namespace does) and the 404 of a missing run for a run it cannot see.
 */

export type CredentialAccess =
  /** The caller holds credentials of this scope. */
  | { readonly ok: true }
  /** It does not; `reason` says why (for `set`'s 403; never shown for a run it cannot see). */
  | { readonly ok: false; readonly reason: string };

export async function credentialAccess(scope: Scope, credential: CredentialScope, store: Store): Promise<CredentialAccess> {
  const labelled = Object.keys(scope.labels).length > 0;
  switch (credential.kind) {
    case "toolset":
      if (scope.namespace === undefined && !labelled) return { ok: true };
      return {
        ok: false,
        reason:
          "A toolset's own credential is sent for every end user's runs: only an unlimited API key (without a namespace header) may manage it. Give `namespace` to manage one end user's credential.",
      };
    case "namespace":
      if (labelled)
        return {
          ok: false,
          reason:
            "This key or token is limited to labels, but an end user's credential is sent for all of their runs, whatever their labels: use a key or token not limited to labels, or give `run`.",
        };
      if (scope.namespace !== undefined && scope.namespace !== credential.namespace)
        return {
          ok: false,
          reason: `This key or token is limited to namespace "${scope.namespace}"; it cannot manage the credentials of "${credential.namespace}".`,
        };
      return { ok: true };
    case "run": {
      const run = await store.getRun(credential.runId);
      return run !== undefined && sees(scope, run) ? { ok: true } : { ok: false, reason: "run not visible" };
    }
  }
}
