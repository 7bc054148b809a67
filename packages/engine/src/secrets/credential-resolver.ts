import { toolFailure, type ToolFailure } from "@tapedeck/protocol";
import type { Store } from "../store/store.js";
import { describeScope, secretValues, type CredentialSecret } from "./credential.js";
import type { KnownSecret } from "./leak-scanner.js";
import type { CredentialVault } from "./vault.js";

/**
 * The seam between the `http` tool and the vault: which credential a run's request to a host
 * carries. The tool knows nothing of scopes or keys; the vault knows nothing of requests.
 * (MCP connections will use the same resolver when they take credentials from the vault.)
 */

/** A credential ready to inject, with the values the leak scanner must redact. */
export interface InjectedCredential {
  readonly secret: CredentialSecret;
  /** The origin it was resolved for: the only one it is sent to. */
  readonly origin: string;
  readonly secrets: readonly KnownSecret[];
}

export type CredentialLookup =
  /** `credential` absent: none applies, the request goes as the script wrote it. */
  | { readonly kind: "ok"; readonly credential?: InjectedCredential }
  /** A credential applies but cannot be used: the call fails with this, and nothing is sent. */
  | { readonly kind: "failure"; readonly failure: ToolFailure };

export type CredentialResolver = (runId: string, host: string, origin: string) => Promise<CredentialLookup>;

/** The engine's resolver: the run's toolset and namespace from the store, then the vault's answer. */
export function vaultResolver(store: Store, vault: CredentialVault): CredentialResolver {
  return async (runId, host, origin) => {
    const run = await store.getRun(runId);
    if (run === undefined) return { kind: "ok" };
    let resolution;
    try {
      resolution = await vault.resolve({ runId, toolsetId: run.toolsetId, namespace: run.namespace }, host);
    } catch (error) {
      // A misconfigured master key: say so to the script, never with a value (there is none here).
      return { kind: "failure", failure: toolFailure("credential_unavailable", `A credential for ${host} could not be read, so nothing was sent: ${error instanceof Error ? error.message : String(error)}`) };
    }
    switch (resolution.kind) {
      case "none":
        return { kind: "ok" };
      case "found":
        return { kind: "ok", credential: { secret: resolution.secret, origin, secrets: secretValues(resolution.secret).map((value) => ({ value, name: resolution.name })) } };
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
        return { kind: "failure", failure: toolFailure("credential_unavailable", `${resolution.reason} Nothing was sent.`, { details: { host, credential: resolution.name } }) };
    }
  };
}
