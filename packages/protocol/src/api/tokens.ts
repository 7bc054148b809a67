import { labels, namespace, type Labels } from "./labels.js";
import { TOKEN_TTL_SECONDS } from "./limits.js";
import { schemaFor } from "./schema-for.js";

/** `POST /v1/tokens`: a token for one end user, minted by an API key. */
export interface CreateTokenRequest {
  /** The end user (their id in your application). */
  readonly namespace: string;
  /** Labels the token is limited to (on top of the minting key's). */
  readonly labels?: Labels;
  /** How long the token is valid. Default 3600 (one hour); at most 30 days. */
  readonly ttlSeconds?: number;
}

export const createTokenRequest = schemaFor<CreateTokenRequest>()({
  type: "object",
  properties: {
    namespace,
    labels,
    ttlSeconds: { type: "integer", minimum: 1, maximum: TOKEN_TTL_SECONDS.max, description: `Default ${TOKEN_TTL_SECONDS.default}.` },
  },
  required: ["namespace"],
  additionalProperties: false,
});

export interface IssuedToken {
  /** Send it as `Authorization: Bearer <token>`. */
  readonly token: string;
  readonly namespace: string;
  readonly labels: Labels;
  readonly expiresAt: number;
}

export const issuedToken = schemaFor<IssuedToken>()({
  type: "object",
  properties: { token: { type: "string" }, namespace: { type: "string" }, labels, expiresAt: { type: "integer" } },
  required: ["token", "namespace", "labels", "expiresAt"],
});
