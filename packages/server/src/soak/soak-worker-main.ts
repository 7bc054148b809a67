/**
 * The soak's SDK worker, in a process of its own so that the soak can SIGKILL it mid-call.
 * Arguments: <baseUrl> <apiKey> <ledgerUrl>. Its host tools `h.effect` (policy `retry`) and
 * `h.once` (`at_most_once`) report the call's idempotency key to the ledger, then answer.
 */
import { Tapedeck, type ToolContext } from "@tapedeck/sdk";

const [baseUrl, apiKey, ledger] = process.argv.slice(2);
if (!baseUrl || !apiKey || !ledger) throw new Error("usage: soak-worker-main <baseUrl> <apiKey> <ledgerUrl>");

const effect = async (args: { op: string }, ctx: ToolContext): Promise<{ op: string; key: string }> => {
  const res = await fetch(ledger, { method: "POST", body: JSON.stringify({ key: ctx.idempotencyKey, tool: ctx.tool }) });
  if (!res.ok) throw new Error(`the ledger answered ${res.status}`);
  return { op: args.op, key: ctx.idempotencyKey };
};
new Tapedeck({ baseUrl, apiKey }).worker({ tools: { h: { effect, once: effect } }, concurrency: 16, pollWaitMs: 5_000 }).start();
