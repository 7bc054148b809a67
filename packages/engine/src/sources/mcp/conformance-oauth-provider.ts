import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

/**
 * An OAuth client for the MCP conformance suite's authorization servers, which approve every
 * authorization request at once: "sending the user" to the authorization URL is one GET whose
 * redirect carries the code. Everything else (discovery, registration, PKCE, token exchange,
 * refresh, upscoping) is the SDK's, driven by `McpConnection`'s transport.
 *
 * State lives in memory for one process: the conformance client runs once per scenario.
 */
export class ConformanceOAuthProvider implements OAuthClientProvider {
  #clientInformation: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #codeVerifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #authorizationCode: string | undefined;
  readonly clientMetadataUrl: string | undefined;

  constructor(
    private readonly options: {
      /** Registered with the authorization server (dynamic registration). */
      readonly clientName: string;
      /** Where the authorization server sends the code back. */
      readonly redirectUrl: string;
      /** A Client ID Metadata Document URL (SEP-991), used when the server supports it. Default: none. */
      readonly clientMetadataUrl?: string;
      /** Pre-registered credentials: no dynamic registration. Default: none. */
      readonly preRegistered?: { readonly client_id: string; readonly client_secret?: string };
    },
  ) {
    this.#clientInformation = options.preRegistered;
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.options.redirectUrl],
      // refresh_token: the client keeps sessions alive without asking the user again (SEP-2207).
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#clientInformation;
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    this.#clientInformation = clientInformation;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new Error("no PKCE code verifier was saved: no authorization was started");
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "tokens") this.#tokens = undefined;
    if (scope === "all" || scope === "client") this.#clientInformation = this.options.preRegistered;
    if (scope === "all" || scope === "verifier") this.#codeVerifier = undefined;
    if (scope === "all" || scope === "discovery") this.#discovery = undefined;
  }

  /** "The user approves": one GET, not following the redirect, whose `Location` holds the code. */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const response = await fetch(authorizationUrl, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    const code = location === null ? null : new URL(location).searchParams.get("code");
    if (code === null)
      throw new Error(`the authorization server at ${authorizationUrl.origin} answered ${response.status} without redirecting back with a code`);
    this.#authorizationCode = code;
  }

  /** The code from the last authorization, once: what the redirect URL's handler would receive. */
  takeAuthorizationCode(): string | undefined {
    const code = this.#authorizationCode;
    this.#authorizationCode = undefined;
    return code;
  }
}
