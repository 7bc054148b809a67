import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a database, that a test can cut (every connection
 * dropped, new ones refused) and restore on the same port: a node whose store URL points here
 * loses its database as if the network failed, while the test still reaches the database itself.
 */
export interface TcpProxy {
  /** The port it listens on (the same after `restore`). */
  readonly port: number;
  /** Drops every connection and stops listening: connecting is refused until `restore`. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const serve = (): Server =>
    createServer((client) => {
      track(client);
      const upstream = createConnection(target);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  const listen = (server: Server, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  let server: Server | undefined = serve();
  const port = await listen(server, 0);
  const cut = async (): Promise<void> => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  return {
    port,
    cut,
    restore: async () => {
      if (server) return;
      server = serve();
      await listen(server, port);
    },
    close: cut,
  };
}
