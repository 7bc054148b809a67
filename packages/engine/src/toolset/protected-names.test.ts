import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { EngineError } from "../errors.js";
import { testEngine } from "../test-support/engines.js";
import { storedToolsets } from "../test-support/stored-toolsets.js";
import { protectedName, protectedNames } from "./protected-names.js";

/**
 * No group may take a name that a script reaches something else by: the engine's own
 * `tapedeck.*` calls (the primitives), the built-ins, the sandbox's globals, JavaScript's. Registration refuses
 * each with the clash named, and stores nothing.
 */
let t: Awaited<ReturnType<typeof testEngine>>;

before(async () => {
  t = await testEngine({ hostTools: { probe: { echo: (args: unknown) => Promise.resolve(args) } } });
});

after(async () => {
  await t.cleanup();
});

async function refusal(spec: unknown): Promise<string> {
  const error = await t.engine.registerToolset(spec).then(
    () => assert.fail(`registered: ${JSON.stringify(spec)}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof EngineError && error.code === "invalid_toolset", String(error));
  return error.message;
}

describe("protected names", () => {
  it("a host-tool group named tapedeck is refused: its calls would be executed as the engine's own waits", async () => {
    const before = storedToolsets(t.dataDir);
    const message = await refusal({ hostTools: { tapedeck: { sleep: { description: "Sleeps." } } } });
    assert.equal(
      message,
      'hostTools: the group name "tapedeck" is taken: it is the engine\'s own: calls named tapedeck.* (sleep, signal, webhook, workflow.start…) are waits the engine executes itself, never sent to a tool. Give the group another name.',
    );
    assert.equal(storedToolsets(t.dataDir), before, "nothing was stored");
  });

  it("every protected name is refused as a host-tool group and as an MCP server's group, with the clash named", async () => {
    const before = storedToolsets(t.dataDir);
    for (const name of protectedNames()) {
      const host = await refusal({ hostTools: { [name]: { x: {} } } });
      assert.ok(host.includes(`the group name "${name}" is taken: ${protectedName(name)!}`), host);
      // Refused before any connection: the URL is never reached.
      const mcp = await refusal({ mcpServers: { [name]: { url: "https://mcp.invalid/mcp" } } });
      assert.ok(mcp.startsWith(`mcpServers: the group name "${name}" is taken`), mcp);
    }
    assert.equal(storedToolsets(t.dataDir), before);
    for (const name of ["workflows", "console", "sleep", "fetch", "ToolError", "JSON", "Promise"]) assert.ok(protectedNames().includes(name), name);
  });

  it("every global the sandbox gives a script is protected", async () => {
    // A toolset with every feature: `fetch` (http) and `workflows` (a saved workflow).
    const base = await t.engine.registerToolset({ hostTools: { probe: { echo: {} } }, http: { allow: ["example.com"] } });
    const saved = await t.engine.saveWorkflow({
      toolset: base.id,
      name: "noop",
      description: "Does nothing.",
      source: "export default async (input: null) => input;",
      input: { type: "null" },
      output: { type: "null" },
    });
    assert.equal(saved.kind, "saved");
    const started = await t.engine.start({
      toolset: saved.kind === "saved" ? saved.id : "",
      source: "export default async () => Object.getOwnPropertyNames(globalThis);",
    });
    assert.equal(started.kind, "started");
    const end = started.kind === "started" ? await started.end : assert.fail();
    assert.equal(end.status, "completed");
    const globals = end.status === "completed" ? (end.output as string[]) : [];
    assert.ok(globals.includes("fetch") && globals.includes("workflows") && globals.includes("sleep"), globals.join(", "));
    const unprotected = globals.filter((name) => protectedName(name) === undefined);
    assert.deepEqual(unprotected, [], "a global the sandbox defines must be added to protected-names.ts");
  });

  it("the built-in library's groups and the agent tools' names are refused as an MCP server's or host tools' group, naming the clash", async () => {
    const files = await refusal({ mcpServers: { files: { url: "https://mcp.invalid/mcp" } } });
    assert.equal(
      files,
      'mcpServers: the group name "files" is taken: it is a group of the built-in tool library (echo, time, json, web, files, shell, memory), which a toolset enables under that name ("library": { "<group>": {} }). Give the group another name.',
    );
    const memory = await refusal({ hostTools: { memory: { write: {} } } });
    assert.match(memory, /^hostTools: the group name "memory" is taken: it is a group of the built-in tool library/);
    const agent = await refusal({ hostTools: { search_tools: { x: {} } } });
    assert.equal(
      agent,
      'hostTools: the group name "search_tools" is taken: it is the name of an agent tool a model is given next to the toolset\'s tools. Give the group another name.',
    );
  });

  it("names that shadow nothing still register", async () => {
    const registered = await t.engine.registerToolset({ hostTools: { crm: { lookup: {} }, tapedeck_crm: { x: {} }, Console: { x: {} } } });
    assert.match(registered.declarations.prompt, /^import \{ Console, crm, tapedeck_crm \} from "tapedeck:tools";/);
  });
});
