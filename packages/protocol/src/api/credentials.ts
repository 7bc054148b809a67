import { id } from "./fields.js";
import { namespace } from "./labels.js";
import { schemaFor } from "./schema-for.js";

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

/** Every kind, in the order the API documents them. */
export const CREDENTIAL_KINDS = ["bearer", "headers", "basic", "query"] as const satisfies readonly CredentialKind[];

/** The longest credential name: a name is a handle (`github`, `stripe.live`), not data. */
const NAME_MAX_LENGTH = 64;
/** The most hosts of a credential. */
const MAX_HOSTS = 32;

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

const scopeFields = {
  toolset: {
    ...id,
    description: "A toolset id: its credential (with `namespace`: that end user's). A caller limited to a namespace gets its own namespace by default.",
  },
  namespace: { ...namespace, description: "An end user's id, with `toolset`." },
  run: { ...id, description: "A run id, alone: that run's own credential." },
} as const;

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

/**
 * The schema holds the fields to their JSON types; which value goes with which kind, and which
 * scope fields go together, the server checks itself (its messages name fields, never values).
 */
export const setCredentialRequest = schemaFor<SetCredentialRequest>()({
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: NAME_MAX_LENGTH, description: "Letters, digits, `_`, `.`, `-`." },
    kind: { type: "string", enum: CREDENTIAL_KINDS },
    value: { type: ["string", "object"], description: "The secret; its shape depends on `kind`." },
    hosts: {
      type: "array",
      minItems: 1,
      maxItems: MAX_HOSTS,
      items: { type: "string", minLength: 1, maxLength: 253 },
      description: "Host patterns, as in `http.allow`.",
    },
    expiresAt: {
      type: "integer",
      minimum: 0,
      description:
        "When the credential is known to expire, ms since the epoch: calls that would send it later park (`credentials.expired`) until it is set again.",
    },
    ...scopeFields,
  },
  required: ["name", "kind", "value", "hosts"],
  additionalProperties: false,
});

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

export const credential = schemaFor<Credential>()({
  type: "object",
  description: "A credential, never its value. Times are milliseconds since the epoch.",
  properties: {
    name: { type: "string" },
    kind: { type: "string", enum: CREDENTIAL_KINDS },
    hosts: { type: "array", items: { type: "string" } },
    toolset: { type: "string" },
    namespace: { type: "string" },
    run: { type: "string" },
    expiresAt: { type: "integer" },
    createdAt: { type: "integer" },
    updatedAt: { type: "integer" },
  },
  required: ["name", "kind", "hosts", "createdAt", "updatedAt"],
});

export interface CredentialList {
  readonly credentials: readonly Credential[];
}

export const credentialList = schemaFor<CredentialList>()({
  type: "object",
  properties: { credentials: { type: "array", items: credential } },
  required: ["credentials"],
});

/** `DELETE /v1/credentials/:name`: which credential of that name (its scope). */
export type DeleteCredentialRequest = { readonly name: string } & CredentialScopeFields;

/** `/v1/credentials/:name`. */
export interface CredentialParams {
  readonly name: string;
}

export const credentialParams = schemaFor<CredentialParams>()({
  type: "object",
  properties: { name: { type: "string", minLength: 1, maxLength: NAME_MAX_LENGTH } },
  required: ["name"],
  additionalProperties: false,
});

/** The query string of `DELETE /v1/credentials/:name`: the credential's scope. */
export const credentialScopeQuery = schemaFor<CredentialScopeFields>()({ type: "object", properties: scopeFields, additionalProperties: false });

/** `POST /v1/credentials/rotate-key` takes an empty body. */
export type RotateKeyRequest = Readonly<Record<string, never>>;

export const rotateKeyRequest = schemaFor<RotateKeyRequest>()({ type: "object", additionalProperties: false });

/** The answer to `POST /v1/credentials/rotate-key`. */
export interface RotatedKey {
  /** The new master key's id (not the key). */
  readonly keyId: string;
  /** How many credentials were re-encrypted under it. */
  readonly rewrapped: number;
}

export const rotatedKey = schemaFor<RotatedKey>()({
  type: "object",
  properties: { keyId: { type: "string" }, rewrapped: { type: "integer" } },
  required: ["keyId", "rewrapped"],
});
