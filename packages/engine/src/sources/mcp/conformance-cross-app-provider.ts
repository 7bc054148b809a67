import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformation, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

/** What the enterprise identity provider and the MCP server's authorization server gave us. */
export interface CrossAppAccessCredentials {
  /** The client at the MCP server's authorization server (authenticated with client_secret_basic). */
  readonly clientId: string;
  readonly clientSecret: string;
  /** The client at the identity provider, and the user's ID token it issued. */
  readonly idpClientId: string;
  readonly idpIdToken: string;
  readonly idpTokenEndpoint: string;
}

const GRANT = {
  tokenExchange: "urn:ietf:params:oauth:grant-type:token-exchange",
  jwtBearer: "urn:ietf:params:oauth:grant-type:jwt-bearer",
} as const;
const TOKEN_TYPE = {
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  idJag: "urn:ietf:params:oauth:token-type:id-jag",
} as const;

/**
 * Cross-app access (SEP-990, enterprise-managed authorization), non-interactive: the user's ID
 * token is exchanged at the identity provider for an ID-JAG (RFC 8693), which the SDK then
 * presents to the MCP server's authorization server as a JWT bearer grant (RFC 7523).
 *
 * The exchange needs the authorization server's issuer (the ID-JAG's audience) and the MCP
 * server's resource, which the SDK's discovery hands over through `saveDiscoveryState` before
 * it asks for the token request.
 */
export class CrossAppAccessProvider implements OAuthClientProvider {
  #tokens: OAuthTokens | undefined;
  #discovery: OAuthDiscoveryState | undefined;

  constructor(private readonly credentials: CrossAppAccessCredentials) {}

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "tapedeck-conformance-cross-app",
      redirect_uris: [],
      grant_types: [GRANT.jwtBearer],
      token_endpoint_auth_method: "client_secret_basic",
    };
  }

  clientInformation(): OAuthClientInformation {
    return { client_id: this.credentials.clientId, client_secret: this.credentials.clientSecret };
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  redirectToAuthorization(): never {
    throw new Error("cross-app access is non-interactive: there is no authorization redirect");
  }

  saveCodeVerifier(): void {}

  codeVerifier(): never {
    throw new Error("cross-app access uses no PKCE code verifier");
  }

  /** The JWT bearer grant, with an ID-JAG fresh from the identity provider. */
  async prepareTokenRequest(): Promise<URLSearchParams> {
    return new URLSearchParams({ grant_type: GRANT.jwtBearer, assertion: await this.exchangeIdToken() });
  }

  private async exchangeIdToken(): Promise<string> {
    const audience = this.#discovery?.authorizationServerMetadata?.issuer ?? this.#discovery?.authorizationServerUrl;
    const resource = this.#discovery?.resourceMetadata?.resource;
    if (audience === undefined || resource === undefined) {
      throw new Error("cross-app access needs the authorization server's issuer and the protected resource metadata: discovery found neither");
    }
    const response = await fetch(this.credentials.idpTokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: GRANT.tokenExchange,
        requested_token_type: TOKEN_TYPE.idJag,
        subject_token: this.credentials.idpIdToken,
        subject_token_type: TOKEN_TYPE.idToken,
        audience,
        resource,
        client_id: this.credentials.idpClientId,
      }),
    });
    const body = (await response.json()) as { access_token?: unknown; error?: unknown; error_description?: unknown };
    if (!response.ok || typeof body.access_token !== "string") {
      throw new Error(
        `the identity provider refused the token exchange (HTTP ${response.status}): ${JSON.stringify(body.error_description ?? body.error ?? "no access_token")}`,
      );
    }
    return body.access_token;
  }
}
