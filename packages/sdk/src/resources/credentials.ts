import type { Credential, CredentialList, DeleteCredentialRequest, RotatedKey, SetCredentialRequest } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/**
 * Credentials the server's `http` tool injects into a script's `fetch` to the hosts they are
 * bound to; the script never sees them. A value is sent once, on `set`, and no answer ever
 * carries it back. A namespace client (`namespace(userId)`) sets, lists and deletes that end
 * user's credentials only; a toolset's own credentials and key rotation need an unlimited key.
 */
export class Credentials {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Creates a credential, or replaces the one of that name in that scope. The scope is
   * `toolset` (with `namespace` for one end user; a namespace client fills in its own) or `run`.
   */
  set(request: SetCredentialRequest): Promise<Credential> {
    return this.#http.request("POST", "/v1/credentials", { body: request });
  }

  /** The credentials in the client's scope, oldest first, without values. */
  async list(): Promise<readonly Credential[]> {
    return (await this.#http.request<CredentialList>("GET", "/v1/credentials")).credentials;
  }

  /** Deletes a credential; a missing one (or one outside the client's scope) is a 404 `not_found`. */
  async delete(request: DeleteCredentialRequest): Promise<void> {
    const { name, ...scope } = request;
    await this.#http.request("DELETE", `/v1/credentials/${encodeURIComponent(name)}`, { query: scope });
  }

  /** Re-encrypts every credential under a new master key (an unlimited API key only). */
  rotateKey(): Promise<RotatedKey> {
    return this.#http.request("POST", "/v1/credentials/rotate-key", { body: {} });
  }
}
