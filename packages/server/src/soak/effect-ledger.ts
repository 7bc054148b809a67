import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The soak's host-side ledger: the host tools of its worker report each call here (its
 * idempotency key and attempt) before answering, as a real service records a request it acted
 * on. A key's effect happens once, however often the key comes (the service deduplicates by
 * key); how often it came is what the soak checks: `retry` calls may come again, `at_most_once`
 * ones never. It lives in the soak's process, so it outlives every worker and server it kills.
 */
export interface EffectLedger {
  /** POST `{ key, tool }` here. */
  readonly url: string;
  /** Calls received per idempotency key. */
  readonly attempts: ReadonlyMap<string, number>;
  /** Calls received in all (every attempt counts). */
  received(): number;
  /** Resolves at the next call received (or at `wake`). */
  next(): Promise<void>;
  /** Resolves every pending `next` now: whoever waits on the workload's progress looks again. */
  wake(): void;
  close(): Promise<void>;
}

export async function startEffectLedger(): Promise<EffectLedger> {
  const attempts = new Map<string, number>();
  let received = 0;
  let waiters: (() => void)[] = [];
  const wake = (): void => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let key: unknown;
      try {
        key = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { key?: unknown }).key;
      } catch {
        key = undefined;
      }
      if (req.method !== "POST" || typeof key !== "string") {
        res.writeHead(400).end("POST a JSON body { key } naming the call's idempotency key");
        return;
      }
      received += 1;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
      wake();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ effects: attempts.size }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/effect`,
    attempts,
    received: () => received,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    wake,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
