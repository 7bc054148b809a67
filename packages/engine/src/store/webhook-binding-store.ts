/**
 * The webhook bindings sub-store: the run-bound webhook URLs scripts make with `webhook(name)`,
 * known by the SHA-256 of their token (the token itself is only in the URL). A POST to the URL
 * becomes the signal `name` of the run. Contract: `contracts/webhook-binding-store-contract.ts`.
 * (The server's outgoing webhooks are another thing: the server's webhook outbox.)
 */
export interface WebhookBindingStore {
  /** Binds a webhook token (by its hash) to a run and a signal name. */
  putWebhook(hook: WebhookBinding): Promise<void>;
  getWebhook(tokenHash: string): Promise<WebhookBinding | undefined>;
}

export interface WebhookBinding {
  readonly tokenHash: string;
  readonly runId: string;
  readonly name: string;
  readonly createdAt: number;
}
