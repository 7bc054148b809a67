import { createHmac } from "node:crypto";
import { WebhookHeader } from "@tapedeck/protocol/api";
import { secretKey } from "./endpoint-secret.js";

/**
 * The headers that sign one attempt, as Standard Webhooks defines them (so its libraries, and
 * the SDK's `verifyWebhook`, verify it): `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the bytes of the endpoint's secret. The
 * timestamp is the attempt's (Unix seconds), so each retry is signed afresh and a receiver can
 * refuse stale ones.
 */
export function signatureHeaders(eventId: string, body: string, secret: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const mac = createHmac("sha256", secretKey(secret)).update(`${eventId}.${timestamp}.`).update(body).digest("base64");
  return { [WebhookHeader.id]: eventId, [WebhookHeader.timestamp]: timestamp, [WebhookHeader.signature]: `v1,${mac}` };
}
