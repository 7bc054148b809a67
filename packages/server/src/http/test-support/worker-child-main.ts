/**
 * An SDK worker in a process of its own, for tests that kill a worker mid-call (SIGKILL: no
 * goodbye, its heartbeats just stop) or read what it logs (its default `onError`, on stderr).
 * Arguments: <baseUrl> <apiKey> <group.name,…>. Each tool prints one line
 * `{"tool","key","attempt"}` on stdout when it starts, then holds the call until a line
 * `finish <idempotency key>` on stdin makes it return `{ "finished": true }` (or forever).
 */
import { createInterface } from "node:readline";
import { Tapedeck, type ToolContext } from "@tapedeck/sdk";

const [baseUrl, apiKey, names] = process.argv.slice(2);
if (!baseUrl || !apiKey || !names) throw new Error("usage: worker-child-main <baseUrl> <apiKey> <group.name,…>");

const held = new Map<string, () => void>();
createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, key] = line.split(" ");
  if (command === "finish" && key !== undefined) held.get(key)?.();
});

const hold = (_args: never, ctx: ToolContext): Promise<{ finished: true }> => {
  process.stdout.write(`${JSON.stringify({ tool: ctx.tool, key: ctx.idempotencyKey, attempt: ctx.attempt })}\n`);
  return new Promise((resolve) => held.set(ctx.idempotencyKey, () => resolve({ finished: true })));
};
const tools: Record<string, Record<string, typeof hold>> = {};
for (const name of names.split(",")) {
  const [group, tool] = name.split(".") as [string, string];
  (tools[group] ??= {})[tool] = hold;
}
new Tapedeck({ baseUrl, apiKey }).worker({ tools, concurrency: 8 }).start();
