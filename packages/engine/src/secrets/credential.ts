/**
 * What a credential is: a named secret of one kind, in one scope, bound to `http` hosts. The
 * value (`CredentialSecret`) lives only in memory and sealed in the store; everything else
 * (`CredentialInfo`) may be listed and logged.
 */

/** How a credential is sent. */
export type CredentialKind =
  /** `Authorization: Bearer <token>`. */
  | "bearer"
  /** Headers of its own (`X-Api-Key: …`), set over the script's. */
  | "headers"
  /** `Authorization: Basic base64(username:password)`. */
  | "basic"
  /** A query parameter (`?api_key=…`) set on the request's URL. */
  | "query";

export const CREDENTIAL_KINDS: readonly CredentialKind[] = ["bearer", "headers", "basic", "query"];

/** The secret part of a credential, by kind. */
export type CredentialSecret =
  | { readonly kind: "bearer"; readonly token: string }
  | { readonly kind: "headers"; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: "basic"; readonly username: string; readonly password: string }
  | { readonly kind: "query"; readonly param: string; readonly value: string };

/** Whose a credential is. A call resolves run → namespace → toolset, and uses one scope's credential, never a mix. */
export type CredentialScope =
  /** Every run of a toolset. */
  | { readonly kind: "toolset"; readonly toolsetId: string }
  /** Runs of a toolset started for one end user (the run's `namespace`). */
  | { readonly kind: "namespace"; readonly toolsetId: string; readonly namespace: string }
  /** One run only. */
  | { readonly kind: "run"; readonly runId: string };

/** A credential as it may be shown: never its value. */
export interface CredentialInfo {
  readonly name: string;
  readonly kind: CredentialKind;
  readonly scope: CredentialScope;
  readonly hosts: readonly string[];
  /** When it is known to expire (ms since the epoch), if it is. */
  readonly expiresAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The scope as one string: the store's key and part of the AAD. JSON of an array, so no value
 * (a namespace with a colon) can make two scopes spell the same.
 */
export function credentialScopeKey(scope: CredentialScope): string {
  switch (scope.kind) {
    case "toolset":
      return JSON.stringify(["toolset", scope.toolsetId]);
    case "namespace":
      return JSON.stringify(["namespace", scope.toolsetId, scope.namespace]);
    case "run":
      return JSON.stringify(["run", scope.runId]);
  }
}

/** The scope a key spells, or undefined for a key this build does not know. */
export function parseCredentialScopeKey(key: string): CredentialScope | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === "string")) return undefined;
  const [kind, a, b] = parts;
  if (kind === "toolset" && a !== undefined && parts.length === 2) return { kind, toolsetId: a };
  if (kind === "namespace" && a !== undefined && b !== undefined && parts.length === 3) return { kind, toolsetId: a, namespace: b };
  if (kind === "run" && a !== undefined && parts.length === 2) return { kind, runId: a };
  return undefined;
}

/** The scopes a call of run `runId` looks in, first match wins. */
export function resolutionOrder(run: {
  readonly runId: string;
  readonly toolsetId: string;
  readonly namespace?: string | undefined;
  readonly bases?: readonly string[];
}): CredentialScope[] {
  // The toolset, then those it derives from: an end user's credential on any of them before a toolset-wide one.
  const toolsets = [run.toolsetId, ...(run.bases ?? [])];
  const namespace = run.namespace;
  return [
    { kind: "run", runId: run.runId },
    ...(namespace === undefined ? [] : toolsets.map((toolsetId) => ({ kind: "namespace", toolsetId, namespace }) as const)),
    ...toolsets.map((toolsetId) => ({ kind: "toolset", toolsetId }) as const),
  ];
}

/** Every value of a secret, for the leak scanner (header names and the query parameter's name are not secret). */
export function secretValues(secret: CredentialSecret): string[] {
  switch (secret.kind) {
    case "bearer":
      return [secret.token];
    case "headers":
      return Object.values(secret.headers);
    case "basic":
      return [secret.password, Buffer.from(`${secret.username}:${secret.password}`).toString("base64")];
    case "query":
      return [secret.value];
  }
}

/** Describes a scope for people: `toolset ts_…`, `namespace alice of toolset ts_…`, `run run_…`. */
export function describeScope(scope: CredentialScope): string {
  switch (scope.kind) {
    case "toolset":
      return `toolset ${scope.toolsetId}`;
    case "namespace":
      return `namespace ${JSON.stringify(scope.namespace)} of toolset ${scope.toolsetId}`;
    case "run":
      return `run ${scope.runId}`;
  }
}
