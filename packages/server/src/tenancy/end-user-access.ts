import type { Permission } from "./permission.js";

/**
 * Who may act as an end user. A run in a namespace is that end user's: its calls are sent with
 * their credentials (`credential-access.ts`), and a token for the namespace starts such runs.
 * So starting a run in a namespace, forking one there, or minting a token for it takes an
 * unlimited key (the operator's, which acts for anyone) or a key or token limited to that very
 * namespace. A key limited only by labels sees the runs carrying them in every namespace, but
 * acts as no end user: its own runs have no namespace.
 */
export function mayActAs(actor: { readonly operator: boolean; readonly endUser?: string }, namespace: string | undefined, action: string): Permission {
  if (namespace === undefined || actor.operator || actor.endUser === namespace) return { ok: true };
  const limit = actor.endUser === undefined ? "is limited to labels, not to a namespace" : `is limited to namespace "${actor.endUser}"`;
  return {
    ok: false,
    reason:
      `This key ${limit}, so it cannot act as the end user "${namespace}": ${action} in their namespace would send their credentials. ` +
      `Use a key limited to namespace "${namespace}" (tapedeck keys create --namespace ${JSON.stringify(namespace)}), a token minted for it, or an unlimited key.`,
  };
}
