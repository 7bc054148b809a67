import type { CreatedWebhookEndpoint, CreateWebhookRequest, WebhookDeliveryList, WebhookEndpoint, WebhookEndpointList } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/**
 * Webhook endpoints: where the server POSTs events (runs waiting, ending, calls needing a
 * decision), signed, retried until a 2xx. An endpoint belongs to the client's scope: it only gets
 * events of runs the client could see. Verify each delivery with `verifyWebhook`.
 */
export class Webhooks {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Registers an endpoint; the answer holds its signing secret, shown this once. */
  create(request: CreateWebhookRequest): Promise<CreatedWebhookEndpoint> {
    return this.#http.request("POST", "/v1/webhooks", { body: request });
  }

  /** The endpoints in the client's scope, oldest first. */
  async list(): Promise<readonly WebhookEndpoint[]> {
    return (await this.#http.request<WebhookEndpointList>("GET", "/v1/webhooks")).endpoints;
  }

  /** Deletes an endpoint: nothing more is sent to it, pending deliveries included. */
  async delete(id: string): Promise<void> {
    await this.#http.request("DELETE", webhookPath(id));
  }

  /** An endpoint's delivery log, newest first: each event's attempts, their status codes, the next attempt. */
  deliveries(id: string, options: { readonly limit?: number; readonly before?: string } = {}): Promise<WebhookDeliveryList> {
    return this.#http.request("GET", `${webhookPath(id)}/deliveries`, { query: { limit: options.limit, before: options.before } });
  }
}

function webhookPath(id: string): string {
  return `/v1/webhooks/${encodeURIComponent(id)}`;
}
