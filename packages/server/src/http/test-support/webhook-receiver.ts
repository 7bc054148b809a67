import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the receiver got: the raw body, exactly as sent, and the headers. */
export interface ReceivedHook {
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
  /** When it arrived (ms since the epoch): what a receiver checks the signing time against, however late it is read. */
  readonly receivedAt: number;
}

/** How the receiver answers its nth request (1-based): a status, or never (the response stays open until `close`). */
export type Answer = (n: number) => number | "hang";

export interface WebhookReceiver {
  readonly url: string;
  /** Every request so far, in order. */
  readonly received: readonly ReceivedHook[];
  /** The nth request (1-based), once it has arrived. */
  request(n: number): Promise<ReceivedHook>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 with an ephemeral port. */
export async function startReceiver(answer: Answer = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const waiting = new Map<number, (hook: ReceivedHook) => void>();
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const hook = { body: Buffer.concat(chunks).toString("utf8"), headers: req.headers, receivedAt: Date.now() };
      received.push(hook);
      const status = answer(received.length);
      if (status === "hang") hanging.push(res);
      else res.writeHead(status).end();
      waiting.get(received.length)?.(hook);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    request: (n) => {
      const hook = received[n - 1];
      return hook ? Promise.resolve(hook) : new Promise((resolve) => waiting.set(n, resolve));
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
