import type { CreateTokenRequest, IssuedToken } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/** End-user tokens: signed, expiring, limited to one namespace (and labels). Minted by an API key. */
export class Tokens {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Mints a token for an end user, to hand to code that must act only for them (their browser,
   * a sandbox): `new Tapedeck({ baseUrl, apiKey: token })`.
   */
  create(request: CreateTokenRequest): Promise<IssuedToken> {
    return this.#http.request("POST", "/v1/tokens", { body: request });
  }
}
