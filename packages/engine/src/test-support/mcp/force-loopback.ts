import net from "node:net";
import type { ListenOptions } from "node:net";

/**
 * Preload that keeps a third-party server on loopback: `node --import <dist>/force-loopback.js …`.
 * Every TCP `listen()` that names no host or a wildcard one ("0.0.0.0", "::") binds 127.0.0.1;
 * pipes, handles and explicit hosts are left alone. When a server starts listening, the preload
 * writes `FORCE_LOOPBACK_READY http://127.0.0.1:<port>` on stderr, so a test can pass PORT=0
 * and learn the port from that line.
 */

export const LOOPBACK_HOST = "127.0.0.1";
export const READY_PREFIX = "FORCE_LOOPBACK_READY ";

const WILDCARD_HOSTS = new Set(["", "0.0.0.0", "::", "0:0:0:0:0:0:0:0"]);

type Callback = () => void;

/** `listen(port?, host?, backlog?, callback?)` with a port (or nothing), as options and callback. */
function portArgs(args: unknown[]): { options: ListenOptions; callback?: Callback } | undefined {
  const [first, ...rest] = args;
  const port = typeof first === "number" ? first : typeof first === "string" && /^\d+$/.test(first) ? Number(first) : undefined;
  if (port === undefined && first !== undefined && typeof first !== "function") return undefined;
  const tail = typeof first === "function" ? args : rest;
  const host = tail.find((arg): arg is string => typeof arg === "string");
  const backlog = tail.find((arg): arg is number => typeof arg === "number");
  const callback = tail.find((arg): arg is Callback => typeof arg === "function");
  return { options: { port: port ?? 0, host, backlog }, callback };
}

/** The arguments `listen` gets instead of `args`. */
function loopbackArgs(args: unknown[]): unknown[] {
  const [first, ...rest] = args;
  if (typeof first === "object" && first !== null && !("_handle" in first) && !("fd" in first)) {
    const options = first as ListenOptions;
    if (options.path !== undefined || !WILDCARD_HOSTS.has(options.host ?? "")) return args;
    return [{ ...options, host: LOOPBACK_HOST }, ...rest];
  }
  const parsed = portArgs(args);
  if (parsed === undefined || !WILDCARD_HOSTS.has(parsed.options.host ?? "")) return args;
  const options = { ...parsed.options, host: LOOPBACK_HOST };
  return parsed.callback === undefined ? [options] : [options, parsed.callback];
}

// eslint-disable-next-line @typescript-eslint/unbound-method -- applied below with the server as `this`
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]): net.Server {
  this.once("listening", () => {
    const address = this.address();
    if (address === null || typeof address !== "object") return;
    const host = address.address.includes(":") ? `[${address.address}]` : address.address;
    process.stderr.write(`${READY_PREFIX}http://${host}:${address.port}\n`);
  });
  return listen.apply(this, loopbackArgs(args) as Parameters<typeof listen>);
} as typeof listen;
