/**
 * An SDK worker in a process of its own, for tests that kill a worker mid-call (SIGKILL: no
 * goodbye, its heartbeats just stop). Arguments: <baseUrl> <apiKey> <group.name,…>. Each tool
 * prints one line `{"tool","key","attempt"}` on stdout when it starts, then holds the call forever.
 */
import { Tapedeck, type ToolContext } from "@tapedeck/sdk";

const [baseUrl, apiKey, names] = process.argv.slice(2);
if (!baseUrl || !apiKey || !names) throw new Error("usage: worker-child-main <baseUrl> <apiKey> <group.name,…>");

const hold = (_args: never, ctx: ToolContext): Promise<never> => {
  process.stdout.write(`${JSON.stringify({ tool: ctx.tool, key: ctx.idempotencyKey, attempt: ctx.attempt })}\n`);
  return new Promise<never>(() => {});
};
const tools: Record<string, Record<string, typeof hold>> = {};
for (const name of names.split(",")) {
  const [group, tool] = name.split(".") as [string, string];
  (tools[group] ??= {})[tool] = hold;
}
new Tapedeck({ baseUrl, apiKey }).worker({ tools, concurrency: 8 }).start();
