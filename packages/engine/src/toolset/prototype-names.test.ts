import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { EngineError } from "../errors.js";
import { startHttpFixture, type HttpFixture } from "../test-support/mcp/http-fixture.js";
import { testEngine } from "../test-support/engines.js";
import { storedToolsets } from "../test-support/stored-toolsets.js";

/**
 * Names that are members of `Object.prototype` (`constructor`, `toString`, `__proto__`…) are
 * names like any other wherever users or servers choose them: groups, tools, workflow signals.
 * Nothing is looked up in a plain object by such a name, so nothing inherited answers for a
 * tool, and a registration that fails stores nothing.
 */
const PROTOTYPE_GROUPS = ["constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"] as const;

const hostTools = {
  ...Object.fromEntries(PROTOTYPE_GROUPS.map((group) => [group, { call: () => Promise.resolve(`${group}.call answered`) }])),
  probe: { toString: () => Promise.resolve("probe.toString answered"), echo: (args: unknown) => Promise.resolve(args) },
};

let t: Awaited<ReturnType<typeof testEngine>>;
let fixture: HttpFixture;

before(async () => {
  t = await testEngine({ hostTools });
  fixture = await startHttpFixture();
});

after(async () => {
  await t.cleanup();
  await fixture.close();
});

async function run(toolset: string, source: string) {
  const started = await t.engine.start({ toolset, source });
  if (started.kind !== "started") return assert.fail(`refused: ${JSON.stringify(started.diagnostics)}`);
  return started.end;
}

describe("names that are Object.prototype members", () => {
  it("groups named constructor, toString, hasOwnProperty… register, and their calls reach the host module", async () => {
    const before = storedToolsets(t.dataDir);
    const spec = { hostTools: Object.fromEntries(PROTOTYPE_GROUPS.map((group) => [group, { call: { description: `Calls ${group}.` } }])) };
    const registered = await t.engine.registerToolset(spec);
    assert.equal(storedToolsets(t.dataDir), before + 1);
    for (const group of PROTOTYPE_GROUPS) assert.match(registered.declarations.typescript, new RegExp(`export const ${group}: \\{`));
    const source = `import { ${PROTOTYPE_GROUPS.join(", ")} } from "tapedeck:tools";
export default async () => [${PROTOTYPE_GROUPS.map((g) => `await ${g}.call()`).join(", ")}];`;
    const end = await run(registered.id, source);
    assert.deepEqual(end, { status: "completed", output: PROTOTYPE_GROUPS.map((g) => `${g}.call answered`) });
  });

  it("a host tool named constructor that the module does not implement is missing, not answered by Object.prototype.constructor", async () => {
    const registered = await t.engine.registerToolset({ hostTools: { probe: { constructor: {}, toString: {} } } });
    const refused = await t.engine
      .start({ toolset: registered.id, source: `import { probe } from "tapedeck:tools";\nexport default async () => probe.constructor({});` })
      .then(
        () => assert.fail("started"),
        (e: unknown) => e,
      );
    assert.ok(refused instanceof EngineError && refused.code === "misconfigured", String(refused));
    assert.match(refused.message, /The host module does not implement probe\.constructor:/);
    assert.doesNotMatch(refused.message, /probe\.toString/, "the module's own toString is an implementation");
    const implemented = await t.engine.registerToolset({ hostTools: { probe: { toString: {} } } });
    assert.deepEqual(await run(implemented.id, `import { probe } from "tapedeck:tools";\nexport default async () => probe.toString({});`), {
      status: "completed",
      output: "probe.toString answered",
    });
  });

  it("an MCP server grouped as toString pins its own tools: no override is looked up on Object.prototype", async () => {
    const registered = await t.engine.registerToolset({ mcpServers: { toString: { url: fixture.url } } }, { override: { other: () => false } });
    const echo = registered.toolset.tools.find((tool) => tool.name === "echo");
    assert.equal(echo?.group, "toString");
    assert.equal(echo?.source, "mcp");
    assert.deepEqual(echo?.remote?.name, "echo");
  });

  it("a workflow signal named __proto__ is declared like any other", async () => {
    const base = await t.engine.registerToolset({ hostTools: { probe: { echo: {} } } });
    const saved = await t.engine.saveWorkflow({
      toolset: base.id,
      name: "waiter",
      description: "Waits.",
      source: `export default async (input: null) => { await signal("__proto__"); return input; };`,
      input: { type: "null" },
      output: { type: "null" },
      signals: JSON.parse('{ "__proto__": { "type": "string" }, "go": { "type": "null" } }') as Record<string, never>,
    });
    assert.equal(saved.kind, "saved");
    const signals = saved.kind === "saved" ? saved.toolset.workflows?.waiter?.signals : undefined;
    assert.deepEqual(Object.keys(signals ?? {}), ["__proto__", "go"]);
    assert.match(saved.kind === "saved" ? saved.declarations.typescript : "", /"__proto__"/);
  });

  it("host tool names that cannot be declared safely are refused, naming the tool: then, __proto__, empty, a newline, a quote", async () => {
    const before = storedToolsets(t.dataDir);
    for (const name of ["then", "__proto__", "", "a\nb", 'say"hi', "two words"]) {
      const refused = await t.engine.registerToolset({ hostTools: { probe: { [name]: { description: "x" } } } }).then(
        () => assert.fail(`${JSON.stringify(name)} registered`),
        (e: unknown) => e as Error,
      );
      assert.match(refused.message, /^hostTools\.probe/, refused.message);
    }
    assert.equal(storedToolsets(t.dataDir), before, "nothing stored");
  });

  it("a registration that fails stores nothing", async () => {
    const before = storedToolsets(t.dataDir);
    await assert.rejects(
      t.engine.registerToolset({ hostTools: { constructor: { call: { inputSchema: { type: "object", properties: { a: { type: "no-such-type" } } } } } } }),
      /cannot be compiled/,
    );
    assert.equal(storedToolsets(t.dataDir), before);
  });
});
