import { ApiError } from "../api-error.js";
import type { Caller } from "./caller.js";

/**
 * Who may act as an end user. A run in a namespace is that end user's: its calls are sent with
 * their credentials (`credential-access.ts`), and a token for the namespace starts such runs.
 * So starting a run in a namespace, forking one there, or minting a token for it takes an
 * unlimited key (the operator's, which acts for anyone) or a key or token limited to that very
 * namespace. A key limited only by labels sees the runs carrying them in every namespace, but
 * acts as no end user: its own runs have no namespace.
 */
export function checkActsAs(caller: Caller, namespace: string | undefined, action: string): void {
  if (namespace === undefined || caller.operator || caller.endUser === namespace) return;
  const limit = caller.endUser === undefined ? "is limited to labels, not to a namespace" : `is limited to namespace "${caller.endUser}"`;
  throw new ApiError(
    "forbidden",
    `This key ${limit}, so it cannot act as the end user "${namespace}": ${action} in their namespace would send their credentials. ` +
      `Use a key limited to namespace "${namespace}" (tapedeck keys create --namespace ${JSON.stringify(namespace)}), a token minted for it, or an unlimited key.`,
  );
}
