import { EngineError } from "../errors.js";
import type { CredentialScope } from "../secrets/credential.js";
import { toolsetChain } from "../secrets/toolset-chain.js";
import type { RunRecord } from "../store/store.js";
import type { RunHost } from "./run-host.js";

/**
 * What setting a credential does to the calls that waited for it: every call parked with
 * `credentials.expired` on that credential (by name; a park that names none waits for any) in a
 * run of the credential's scope — the scope's toolset or one derived from it — is sent again,
 * as an approval: `call.decided` is journaled, then the call goes with its idempotency key. A
 * call refused again parks again. Runs held by another process get the decision as a request.
 */

/** Runs looked at per renewal: parked calls are few; more than this many runs is reported, not walked. */
const RUNS_PER_RENEWAL = 10_000;

export class CredentialRenewal {
  /** `host` approves the parked calls (rejecting with a `conflict` when one was decided meanwhile) and hears of faults. */
  constructor(private readonly host: RunHost) {}

  /** Sends again the calls waiting for credential `name` of `scope`; resolves with the runs they belong to. */
  async renewed(scope: CredentialScope, name: string): Promise<string[]> {
    const runs = await this.host.store.listRuns({
      needsDecision: true,
      limit: RUNS_PER_RENEWAL,
      ...(scope.kind === "namespace" ? { namespace: scope.namespace } : {}),
    });
    if (runs.length === RUNS_PER_RENEWAL)
      this.host.onError(
        new Error(
          `Setting the credential ${name} looked at the first ${RUNS_PER_RENEWAL} runs waiting for a decision only; approve the calls of the others that wait for it by hand.`,
        ),
      );
    const resent = await Promise.all(runs.map((run) => this.#resend(run, scope, name)));
    return runs.filter((_, i) => resent[i]).map((run) => run.id);
  }

  /** Approves the run's calls that wait for the credential; true when there was one. */
  async #resend(run: RunRecord, scope: CredentialScope, name: string): Promise<boolean> {
    const waiting = (run.waits ?? []).filter(
      (wait) => wait.kind === "parked" && wait.reason === "credentials.expired" && (wait.credential === undefined || wait.credential === name),
    );
    if (waiting.length === 0 || !(await this.#inScope(run, scope))) return false;
    for (const wait of waiting) {
      await this.host.decide(run.id, wait.seq, "approved", `the credential ${name} was renewed`).catch((error: unknown) => {
        // Decided meanwhile (rejected, or sent by another renewal): nothing to do. Else the call
        // stays parked (approve it, or renew again) and the other runs go on.
        if (!(EngineError.is(error) && error.code === "conflict")) this.host.onError(error);
      });
    }
    return true;
  }

  async #inScope(run: RunRecord, scope: CredentialScope): Promise<boolean> {
    if (scope.kind === "run") return run.id === scope.runId;
    return (await toolsetChain(this.host.store, run.toolsetId)).includes(scope.toolsetId);
  }
}
