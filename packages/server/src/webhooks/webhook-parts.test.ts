import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyWebhook } from "@tapedeck/sdk";
import { newEndpointSecret, SecretBox } from "./endpoint-secret.js";
import { DEFAULT_RETRY_SCHEDULE, retryDelay } from "./retry-schedule.js";
import { signatureHeaders } from "./signature.js";
import { checkWebhookUrl } from "./webhook-url.js";
import type { HostResolver } from "@tapedeck/engine/net";
import { WebhookPoster } from "./webhook-poster.js";
import { startReceiver } from "../http/test-support/webhook-receiver.js";

describe("webhook parts", () => {
  it("signs exactly as Standard Webhooks does (its published test vector), and the SDK verifies what the server signs", async () => {
    const headers = signatureHeaders("msg_p5jXN8AQM9LWM0D4loKWxJek", '{"test": 2432232314}', "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 1_614_265_330_000);
    assert.deepEqual(headers, {
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
    const secret = newEndpointSecret();
    const body = JSON.stringify({ id: "evt_1", type: "run.completed", createdAt: 1, data: { runId: "run_1", toolset: "ts_1", labels: {}, output: "é ✓" } });
    const now = Date.now();
    const verified = await verifyWebhook(body, signatureHeaders("evt_1", body, secret, now), secret, { now });
    assert.ok(verified.ok && verified.event.id === "evt_1");
    const rotated = {
      ...signatureHeaders("evt_1", body, secret, now),
      "webhook-signature": `v1,${"A".repeat(44)} ${signatureHeaders("evt_1", body, secret, now)["webhook-signature"]!}`,
    };
    assert.ok((await verifyWebhook(body, rotated, secret, { now })).ok, "any of several signatures (a secret being rotated) may match");
    assert.deepEqual(await verifyWebhook("{", signatureHeaders("evt_1", "{", secret, now), secret, { now }), {
      ok: false,
      reason: "invalid_body",
      message: "The signature matches but the body is not JSON.",
    });
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
    for (const url of [
      "http://127.0.0.1:8080/x",
      "http://localhost/x",
      "http://api.localhost/x",
      "http://10.1.2.3/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://169.254.169.254/latest",
      "http://192.168.1.1/",
      "http://[fd00::1]/",
      "http://100.64.0.1/",
      "http://[64:ff9b::7f00:1]/",
      "http://[2002:a9fe:a9fe::]/",
      "http://198.18.0.1/",
      "http://localhost./",
      "http://0/",
    ]) {
      assert.equal(checkWebhookUrl(url, { allowPrivate: false }).ok, false, url);
      assert.equal(checkWebhookUrl(url, { allowPrivate: true }).ok, true, url);
    }
    assert.deepEqual(checkWebhookUrl("https://hooks.example.com/a?b=1", { allowPrivate: false }), { ok: true, url: "https://hooks.example.com/a?b=1" });
    for (const url of ["ftp://example.com/", "https://user:pw@example.com/", "not a url", "file:///etc/passwd"])
      assert.equal(checkWebhookUrl(url, { allowPrivate: true }).ok, false, url);
  });

  it("a tenant's endpoint is only reached at a public address, however its name resolves; the operator's anywhere", async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    // Names a tenant could register (they pass the URL check), answering with private addresses.
    const answers: Record<string, string[]> = {
      "rebind.example": ["127.0.0.1"],
      "mixed.example": ["93.184.215.14", "10.0.0.7"],
      "mapped.example": ["::ffff:127.0.0.1"],
      "meta.example": ["169.254.169.254"],
    };
    const poster = new WebhookPoster({ timeoutMs: 5_000, resolver: (host) => Promise.resolve(answers[host] ?? []) });
    try {
      for (const host of Object.keys(answers)) {
        const url = `http://${host}:${port}/hook`;
        assert.equal(checkWebhookUrl(url, { allowPrivate: false }).ok, true, "a name passes the URL check");
        const result = await poster.post({ url, anyAddress: false }, { "content-type": "application/json" }, "{}");
        assert.equal(result.statusCode, undefined, host);
        assert.match(
          result.error ?? "",
          new RegExp(`^refused: ${host.replace(/\./g, "\\.")} resolves to .*; webhooks of a limited key are only sent to public addresses`),
          host,
        );
      }
      assert.equal(receiver.received.length, 0, "nothing reached the receiver");
      const operator = await poster.post({ url: receiver.url, anyAddress: true }, { "content-type": "application/json" }, '{"n":1}');
      assert.deepEqual(operator, { statusCode: 200 });
      assert.equal(receiver.received.length, 1);
    } finally {
      await poster.close();
      await receiver.close();
    }
  });

  it("a tenant's endpoint is called at the address its name resolved to, once per attempt: a second answer cannot redirect it", async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    // Test-only: loopback passes the check, so the pinned path can reach a local receiver.
    let lookups = 0;
    const rebinding: HostResolver = () => Promise.resolve(lookups++ === 0 ? ["127.0.0.1"] : ["10.9.9.9"]);
    const poster = new WebhookPoster({ timeoutMs: 5_000, resolver: rebinding, unsafeAllowLoopbackForTests: true });
    try {
      const result = await poster.post({ url: `http://hooks.tenant.example:${port}/in`, anyAddress: false }, { "content-type": "application/json" }, '{"n":2}');
      assert.deepEqual(result, { statusCode: 200 });
      assert.equal(lookups, 1, "resolved once; the connection went to that answer");
      assert.equal(receiver.received[0]?.headers.host, `hooks.tenant.example:${port}`, "the name is still the Host");
      assert.equal(receiver.received[0]?.body, '{"n":2}');
      const second = await poster.post({ url: `http://hooks.tenant.example:${port}/in`, anyAddress: false }, { "content-type": "application/json" }, "{}");
      assert.match(second.error ?? "", /^refused: hooks\.tenant\.example resolves to 10\.9\.9\.9/, "the next attempt resolves again, and is checked again");
      assert.equal(receiver.received.length, 1);
    } finally {
      await poster.close();
      await receiver.close();
    }
  });
});
