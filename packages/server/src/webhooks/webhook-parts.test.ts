import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyWebhook } from "@tapedeck/sdk";
import { newEndpointSecret, SecretBox } from "./endpoint-secret.js";
import { DEFAULT_RETRY_SCHEDULE, retryDelay } from "./retry-schedule.js";
import { signatureHeaders } from "./signature.js";
import { checkWebhookUrl } from "./webhook-url.js";

describe("webhook parts", () => {
  it("signs exactly as Standard Webhooks does (its published test vector), and the SDK verifies what the server signs", async () => {
    const headers = signatureHeaders("msg_p5jXN8AQM9LWM0D4loKWxJek", '{"test": 2432232314}', "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1_614_265_330_000);
    assert.deepEqual(headers, { "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330", "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" });
    const secret = newEndpointSecret();
    const body = JSON.stringify({ id: "evt_1", type: "run.completed", createdAt: 1, data: { runId: "run_1", toolset: "ts_1", labels: {}, output: "é ✓" } });
    const now = Date.now();
    const verified = await verifyWebhook(body, signatureHeaders("evt_1", body, secret, now), secret, { now });
    assert.ok(verified.ok && verified.event.id === "evt_1");
    const rotated = { ...signatureHeaders("evt_1", body, secret, now), "webhook-signature": `v1,${"A".repeat(44)} ${signatureHeaders("evt_1", body, secret, now)["webhook-signature"]!}` };
    assert.ok((await verifyWebhook(body, rotated, secret, { now })).ok, "any of several signatures (a secret being rotated) may match");
    assert.deepEqual(await verifyWebhook("{", signatureHeaders("evt_1", "{", secret, now), secret, { now }), { ok: false, reason: "invalid_body", message: "The signature matches but the body is not JSON." });
    await assert.rejects(verifyWebhook(body, signatureHeaders("evt_1", body, secret, now), "not-a-secret", { now }), TypeError);
  });

  it("secrets are sealed under the server secret: readable with it, not without it", () => {
    const secret = newEndpointSecret();
    const sealed = new SecretBox(Buffer.alloc(32, 1)).seal(secret);
    assert.doesNotMatch(sealed, new RegExp(secret.slice(6, 20).replace(/[+/]/g, ".")));
    assert.equal(new SecretBox(Buffer.alloc(32, 1)).open(sealed), secret);
    assert.equal(new SecretBox(Buffer.alloc(32, 2)).open(sealed), undefined);
    assert.equal(new SecretBox(Buffer.alloc(32, 1)).open("v1.garbage"), undefined);
  });

  it("retries back off exponentially, capped, and stop after the last attempt", () => {
    const delays = Array.from({ length: 8 }, (_, i) => retryDelay(DEFAULT_RETRY_SCHEDULE, i + 1));
    assert.deepEqual(delays, [10_000, 40_000, 160_000, 640_000, 2_560_000, 10_240_000, 21_600_000, undefined]);
  });

  it("endpoint URLs: http(s) without credentials; loopback and private addresses only for the operator", () => {
    for (const url of ["http://127.0.0.1:8080/x", "http://localhost/x", "http://api.localhost/x", "http://10.1.2.3/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/", "http://2130706433/", "http://169.254.169.254/latest", "http://192.168.1.1/", "http://[fd00::1]/"]) {
      assert.equal(checkWebhookUrl(url, { allowPrivate: false }).ok, false, url);
      assert.equal(checkWebhookUrl(url, { allowPrivate: true }).ok, true, url);
    }
    assert.deepEqual(checkWebhookUrl("https://hooks.example.com/a?b=1", { allowPrivate: false }), { ok: true, url: "https://hooks.example.com/a?b=1" });
    for (const url of ["ftp://example.com/", "https://user:pw@example.com/", "not a url", "file:///etc/passwd"]) assert.equal(checkWebhookUrl(url, { allowPrivate: true }).ok, false, url);
  });
});
