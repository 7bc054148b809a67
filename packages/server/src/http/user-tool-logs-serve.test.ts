import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JournalEntry, Run, Tapedeck, ToolsetSpec } from "@tapedeck/sdk";
import { startServeChild } from "./test-support/serve-child.js";

/**
 * A user tool's `console.*` lines through the HTTP API of a real `tapedeck serve`: the journal
 * page and the entry read in full both give them on the call's outcome entry (`logs`), and the
 * OpenAPI document says what they are.
 */

const TOOLSET: ToolsetSpec = {
  userTools: {
    tools: {
      greet: {
        description: "Greets someone, saying so in its log.",
        code: `export default async (input: { name: string }) => {
            console.log("greeting", input.name);
            console.warn("nobody asked twice");
            return { text: "hello " + input.name };
          };`,
        inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        outputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        grants: {},
      },
    },
  },
};

/** Reads the run until it ends; fails saying how it stood after 30 s. */
async function ended(td: Tapedeck, id: string): Promise<Run> {
  const deadline = Date.now() + 30_000;
  for (let run = await td.runs.get(id); ; run = await td.runs.get(id, { wait: 1 })) {
    if (run.status !== "running") return run;
    if (Date.now() > deadline) assert.fail(`the run did not end: ${JSON.stringify(run)}`);
  }
}

describe("a user tool's logs over HTTP", () => {
  it("are on the call's outcome entry of the journal page and of the entry read in full", async () => {
    const server = await startServeChild();
    try {
      const td = server.client(server.adminKey!);
      const toolset = (await td.toolsets.create(TOOLSET)).id;
      const started = await td.runs.start({
        toolset,
        source: `import { tools } from "tapedeck:tools";\nexport default async () => { console.log("script line"); return (await tools.greet({ name: "Ada" })).text; };`,
      });
      if (started.kind !== "started") assert.fail(started.diagnostics.map((d) => d.message).join("\n"));
      const done = await ended(td, started.run.id);
      assert.deepEqual([done.status, done.output], ["completed", "hello Ada"], JSON.stringify(done));
      const { entries } = await td.runs.journal(done.id);
      const outcome = entries.find((e): e is Extract<JournalEntry, { kind: "call.completed" }> => e.kind === "call.completed" && e.seq === 1);
      const expected = [
        { level: "log", message: "greeting Ada" },
        { level: "warn", message: "nobody asked twice" },
      ];
      assert.deepEqual(outcome?.logs, expected, JSON.stringify(entries));
      assert.deepEqual(
        entries.flatMap((e) => (e.kind === "log" ? [e.message] : [])),
        ["script line"],
        "the script's log entries are its own",
      );
      const full = await td.runs.entry(done.id, outcome.index);
      assert.deepEqual(full.kind === "call.completed" ? full.logs : undefined, expected);
      const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
      assert.match(JSON.stringify(openapi.paths["/v1/runs/{id}/journal/{index}"]?.get?.responses["200"]), /`logs`/);
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      server.cleanup();
    }
  });
});
