import { toolFailure, type ToolFailure } from "@tapedeck/protocol";
import type { Store } from "../store/store.js";
import { describeScope, secretValues, type CredentialScope, type CredentialSecret } from "./credential.js";
import { derivedUseProblem, type CredentialUse } from "./derived-credential-use.js";
import type { KnownSecret } from "./leak-scanner.js";
import { toolsetChain } from "./toolset-chain.js";
import type { CredentialVault } from "./vault.js";

/**
 * The seam between the `http` tool and the vault: which credential a run's request to a host
 * carries. The tool knows nothing of scopes or keys; the vault knows nothing of requests.
 * MCP connections to Streamable HTTP servers use the same resolver, for the server URL's host.
 */

/** A credential ready to inject, with the values the leak scanner must redact. */
export interface InjectedCredential {
  /** Its name in its scope (safe in messages). */
  readonly name: string;
  readonly secret: CredentialSecret;
  /** The origin it was resolved for: the only one it is sent to. */
  readonly origin: string;
  readonly secrets: readonly KnownSecret[];
}

/** Whether two resolutions gave the same credential (name and value): a renewal gives another. */
export function sameCredential(a: InjectedCredential, b: InjectedCredential): boolean {
  return a.name === b.name && JSON.stringify(a.secret) === JSON.stringify(b.secret);
}

export type CredentialLookup =
  /** `credential` absent: none applies, the request goes as the script wrote it. */
  | { readonly kind: "ok"; readonly credential?: InjectedCredential }
  /** A credential applies but cannot be used: the call fails with this, and nothing is sent. */
  | { readonly kind: "failure"; readonly failure: ToolFailure }
  /** The credential that applies has expired: nothing is sent, the call parks until it is renewed (a tool source's `Park`). */
  | { readonly kind: "expired"; readonly park: CredentialPark };

/** Why a call waits for a credential: what the source parks it with (`Park` in `sources/tool-source.ts`). */
export interface CredentialPark {
  readonly reason: "credentials.expired";
  readonly message: string;
  /** The credential it waits for: setting that one sends the call again. */
  readonly credential: string;
}

/**
 * `name`: the credential the request named; it must exist in one of the run's scopes and be bound to `host`.
 * `use`: who sends it (a script's `http.fetch`, a user tool's `fetch`): a credential found on a toolset the
 * run's toolset derives from is refused for a use that toolset's own tools did not have (`derived-credential-use.ts`).
 * Absent (MCP connections), it is not checked.
 */
export type CredentialResolver = (runId: string, host: string, origin: string, name?: string, use?: CredentialUse) => Promise<CredentialLookup>;

/** The engine's resolver: the run's toolset and namespace from the store, then the vault's answer. */
export function vaultResolver(store: Store, vault: CredentialVault): CredentialResolver {
  return async (runId, host, origin, name, use) => {
    const run = await store.getRun(runId);
    if (run === undefined) return { kind: "ok" };
    let resolution;
    try {
      const [, ...bases] = await toolsetChain(store, run.toolsetId);
      resolution = await vault.resolve({ runId, toolsetId: run.toolsetId, namespace: run.namespace, bases }, host, name);
    } catch (error) {
      // A misconfigured master key: say so to the script, never with a value (there is none here).
      return {
        kind: "failure",
        failure: toolFailure(
          "credential_unavailable",
          `A credential for ${host} could not be read, so nothing was sent: ${error instanceof Error ? error.message : String(error)}`,
        ),
      };
    }
    switch (resolution.kind) {
      case "none":
        if (name === undefined) return { kind: "ok" };
        return {
          kind: "failure",
          failure: toolFailure(
            "credential_unavailable",
            `No credential named ${name} is set for this run, its end user or its toolset, so nothing was sent. Use a credential that exists, or ask for ${name} to be set (tapedeck credentials set).`,
            { details: { host, credential: name } },
          ),
        };
      case "expired":
        return {
          kind: "expired",
          park: {
            reason: "credentials.expired",
            credential: resolution.name,
            message: `The credential "${resolution.name}" for ${host} expired at ${new Date(resolution.expiresAt).toISOString()}, so nothing was sent. The call waits; renew the credential (tapedeck credentials set, or the API) and it is sent with its idempotency key, or reject it.`,
          },
        };
      case "unbound":
        return {
          kind: "failure",
          failure: toolFailure(
            "refused",
            `The credential ${name ?? resolution.name} may only be sent to ${resolution.hosts.join(", ")}, not to ${host}, so nothing was sent. Send it to one of its hosts, or drop the credential option.`,
            { details: { host, credential: resolution.name } },
          ),
        };
      case "found": {
        const refused = use === undefined ? undefined : await derivedUseRefusal(store, run.toolsetId, resolution.scope, resolution.name, host, use);
        if (refused !== undefined) return { kind: "failure", failure: toolFailure("refused", refused, { details: { host, credential: resolution.name } }) };
        return {
          kind: "ok",
          credential: {
            name: resolution.name,
            secret: resolution.secret,
            origin,
            secrets: secretValues(resolution.secret).map((value) => ({ value, name: resolution.name })),
          },
        };
      }
      case "ambiguous":
        return {
          kind: "failure",
          failure: toolFailure(
            "credential_unavailable",
            `The ${describeScope(resolution.scope)} has several credentials for ${host} (${resolution.names.join(", ")}), so nothing was sent. Whoever manages credentials must delete one or narrow its --host.`,
            { details: { host, credentials: [...resolution.names] } },
          ),
        };
      case "unreadable":
        return {
          kind: "failure",
          failure: toolFailure("credential_unavailable", `${resolution.reason} Nothing was sent.`, { details: { host, credential: resolution.name } }),
        };
    }
  };
}

/** Why a credential found in `scope` may not be sent for `use` in a run of `toolsetId`; undefined when it may. */
async function derivedUseRefusal(
  store: Store,
  toolsetId: string,
  scope: CredentialScope,
  name: string,
  host: string,
  use: CredentialUse,
): Promise<string | undefined> {
  // The run's own credentials, and those set on its very toolset, are used as their owner set them.
  if (scope.kind === "run" || scope.toolsetId === toolsetId) return undefined;
  const owner = await store.getToolset(scope.toolsetId);
  if (owner === undefined) return `The credential ${name} is set on the toolset ${scope.toolsetId}, which cannot be read, so nothing was sent.`;
  return derivedUseProblem(owner, name, host, use);
}
