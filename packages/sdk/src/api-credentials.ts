/**
 * The wire format of credentials (`/v1/credentials`): secrets the server's `http` tool sends to
 * the hosts they are bound to. A value goes in and never comes back out: no answer carries it.
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

/** The value of each kind of credential. */
export interface CredentialValues {
  /** The token. */
  readonly bearer: string;
  /** Header names to values: `{ "X-Api-Key": "…" }`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly basic: { readonly username: string; readonly password: string };
  /** The parameter's name and value: `{ param: "api_key", value: "…" }`. */
  readonly query: { readonly param: string; readonly value: string };
}

/**
 * Whose a credential is: a toolset's (every run of it), an end user's for a toolset (`toolset`
 * and `namespace`: the runs of that namespace), or one run's (`run` alone). A call uses the
 * credential of the first scope that has one for its host: run, then end user, then toolset.
 */
export type CredentialScopeFields =
  | { readonly toolset: string; readonly namespace?: string; readonly run?: never }
  | { readonly run: string; readonly toolset?: never; readonly namespace?: never };

/** `POST /v1/credentials`: creates the credential, or replaces the one of that name in that scope. */
export type SetCredentialRequest = {
  readonly [K in CredentialKind]: {
    /** 1 to 64 letters, digits, `_`, `.` or `-`, starting with a letter or digit. */
    readonly name: string;
    readonly kind: K;
    readonly value: CredentialValues[K];
    /** Host patterns it is sent to, as in a toolset's `http.allow` (`api.github.com`, `*.example.com`). */
    readonly hosts: readonly string[];
    /** When it is known to expire (ms since the epoch): calls that would send it later wait (`credentials.expired`) until it is set again. */
    readonly expiresAt?: number;
  };
}[CredentialKind] &
  CredentialScopeFields;

/** A credential as the API shows it: never its value. */
export interface Credential {
  readonly name: string;
  readonly kind: CredentialKind;
  /** Normalised host patterns, sorted. */
  readonly hosts: readonly string[];
  /** Set for a toolset's or an end user's credential. */
  readonly toolset?: string;
  /** Set for an end user's credential. */
  readonly namespace?: string;
  /** Set for a run's own credential. */
  readonly run?: string;
  /** When it is known to expire. */
  readonly expiresAt?: number;
  /** Times are milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface CredentialList {
  readonly credentials: readonly Credential[];
}

/** `DELETE /v1/credentials/:name`: which credential of that name (its scope). */
export type DeleteCredentialRequest = { readonly name: string } & CredentialScopeFields;

/** The answer to `POST /v1/credentials/rotate-key`. */
export interface RotatedKey {
  /** The new master key's id (not the key). */
  readonly keyId: string;
  /** How many credentials were re-encrypted under it. */
  readonly rewrapped: number;
}
