import type { ErasedNamespace } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/** End users' namespaces as a whole: their erasure. */
export class Namespaces {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Erases an end user: every run, session, credential, rate-limit window, schedule, workspace
   * file, memory document and webhook delivery of `namespace`, and answers the counts. Refused
   * (409, nothing deleted) while a run of it has not ended, unless `cancel`; `dryRun` counts. An
   * unlimited API key, or a key limited to exactly that namespace without labels.
   */
  erase(namespace: string, options: { readonly cancel?: boolean; readonly dryRun?: boolean } = {}): Promise<ErasedNamespace> {
    return this.#http.request("DELETE", `/v1/namespaces/${encodeURIComponent(namespace)}`, {
      query: { cancel: options.cancel === true ? "true" : undefined, dryRun: options.dryRun === true ? "true" : undefined },
    });
  }
}
