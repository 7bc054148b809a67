/**
 * One node of the multi-node benchmark (`multi-node.ts`), in a process of its own: an engine on
 * the store `argv[2]` with an in-process echo host tool. It runs one warm-up run, prints `ready`,
 * waits for `go` on stdin, runs `argv[3]` runs of `argv[4]` sequential calls at once, prints
 * `{"ms": …}` (from `go` to the last run's end) and exits.
 */
import { createInterface } from "node:readline";
import { Engine } from "../engine.js";
import { InProcessHostTools } from "../sources/in-process-host-tools.js";

const [store, runsText, callsText] = process.argv.slice(2);
if (store === undefined || runsText === undefined || callsText === undefined) throw new Error("usage: store-node-child <store> <runs> <calls>");
const runs = Number(runsText);
const calls = Number(callsText);
const TOOLSET = { hostTools: { t: { echo: { description: "Echo.", inputSchema: { type: "object" } } } } };
const SOURCE = `import { t } from "tapedeck:tools";
export default async () => { let n = 0; for (let i = 0; i < ${calls}; i++) { await t.echo({ i }); n++; } return n; };`;

const engine = await Engine.open({
  store,
  sources: { host: new InProcessHostTools({ t: { echo: (args: unknown) => Promise.resolve(args) } }) },
});
const { id } = await engine.registerToolset(TOOLSET);

async function runAll(count: number): Promise<void> {
  const ends = [];
  for (let i = 0; i < count; i++) {
    const started = await engine.start({ toolset: id, source: SOURCE });
    if (started.kind !== "started") throw new Error("refused");
    ends.push(started.end);
  }
  for (const end of await Promise.all(ends)) if (end.status !== "completed") throw new Error(`a run ended ${end.status}`);
}

await runAll(Math.min(runs, 10));
console.log("ready");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line !== "go") continue;
  const begin = performance.now();
  await runAll(runs);
  console.log(JSON.stringify({ ms: performance.now() - begin }));
  break;
}
lines.close();
await engine.close();
