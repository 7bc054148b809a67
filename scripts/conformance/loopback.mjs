// Keeps the conformance suite's test servers on loopback. They call `app.listen(0)` (every
// interface) and read `server.address().port` at once, so the bind must stay synchronous:
// giving `listen` a host would resolve it first and leave `address()` null. A TCP listen that
// names no host is bound to 127.0.0.1 directly, the way `listen(port)` binds the wildcard,
// through `Server#_listen2` (Node's long-standing internal alias of its bind step). Anything
// else (a host, a path, a handle, options) goes to the real `listen`.
// Use with `node --import ./scripts/conformance/loopback.mjs`.
import net from "node:net";

const LOOPBACK = "127.0.0.1";
const DEFAULT_BACKLOG = 511;
const listen = net.Server.prototype.listen;

if (typeof net.Server.prototype._listen2 !== "function") {
  throw new Error("conformance/loopback.mjs: this Node has no net.Server#_listen2; cannot force the test servers onto loopback");
}

net.Server.prototype.listen = function (...args) {
  const [port, second, third] = args;
  const callback = args.find((arg) => typeof arg === "function");
  const portOnly = (typeof port === "number" || port === undefined || typeof port === "function") && (second === undefined || second === callback) && third === undefined;
  if (!portOnly) return listen.apply(this, args);
  if (callback) this.once("listening", callback);
  this._listen2(LOOPBACK, typeof port === "number" ? port : 0, 4, DEFAULT_BACKLOG);
  return this;
};
