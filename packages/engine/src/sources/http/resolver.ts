import { lookup } from "node:dns/promises";

/**
 * Resolves a host name to its addresses, in the order the system prefers them. The `http`
 * tool calls it once per request (and once per redirect), checks every answer, and connects to
 * the first: the answer that was checked is the one connected to, whatever a later lookup of
 * the same name would say. Tests inject their own to play DNS (private answers, rebinding).
 */
export type HostResolver = (hostname: string, signal: AbortSignal) => Promise<readonly string[]>;

/** The system resolver (`getaddrinfo`, as `net.connect` would use): every address, in system order. */
export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};
