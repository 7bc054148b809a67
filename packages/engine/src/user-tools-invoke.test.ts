import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import type { JournalEntry, JsonObject, JsonValue, RunEnd, ToolsetSpec, UserToolFileSpec } from "@tapedeck/protocol";
import type { Engine } from "./engine.js";
import type { HostToolContext } from "./sources/in-process-host-tools.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { testEngine, testSandboxes } from "./test-support/engines.js";
import { output, registrationError, subCalls } from "./test-support/user-tool-runs.js";

/**
 * User tools invoking host tools and other user tools, through the Engine API: every invocation
 * is a `call.sub` of the run's journal keyed `{run}/{seq}.{n}` and sent with that key; an
 * invoked user tool's own host calls are keyed under its key (`{run}/{seq}.{n}.{m}`), so a
 * resumed run re-runs both against what was recorded and sends nothing that was answered;
 * invocations count against the invoking tool's `toolCalls`, and nesting is bounded (cycles
 * end with a clear error). Registration type-checks a tool against the declarations of the
 * host and user tools it is granted.
 */

after(() => testSandboxes().close());

let server: LoopbackServer;
/** While true, `/v1/hold` never answers: an engine is stopped while a request to it is in flight. */
let holding = true;
before(async () => {
  const json = (body: JsonValue) => (_req: unknown, res: ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  server = await startLoopbackServer({
    "/v1/items": json({ items: [1, 2, 3] }),
    "/v1/hold": (_req, res) => {
      if (!holding) json({ held: false })(undefined, res);
    },
  });
});
after(() => server.close());

const base = () => `http://127.0.0.1:${server.port}`;
const hits = (path: string) => server.received.filter((r) => r.path === path).length;
const HTTP_GRANT = { http: [{ host: "127.0.0.1", pathPrefix: "/v1/" }] };
const OBJECT = { type: "object" } as const;

const PRICE: ToolsetSpec["hostTools"] = {
  shop: {
    price: {
      description: "The price of a SKU.",
      inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
      outputSchema: { type: "object", properties: { sku: { type: "string" }, cents: { type: "number" } }, required: ["sku", "cents"] },
    },
  },
};

/** An in-process `shop.price` that notes the context of every call it serves. */
function priceTools(seen: Pick<HostToolContext, "idempotencyKey" | "seq" | "attempt">[]) {
  return {
    shop: {
      price: ({ sku }: { sku: string }, ctx: HostToolContext) => {
        seen.push({ idempotencyKey: ctx.idempotencyKey, seq: ctx.seq, attempt: ctx.attempt });
        return { sku, cents: sku.length * 100 };
      },
    },
  };
}

const described = (journal: readonly JournalEntry[], runId: string) =>
  subCalls(journal).map((e) => `${e.key.slice(runId.length)} ${e.tool} ${e.answer.ok ? "ok" : e.answer.error.code}`);

async function start(engine: Engine, toolset: string, source: string): Promise<{ runId: string; end: Promise<RunEnd> }> {
  const started = await engine.start({ toolset, source });
  if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
  return { runId: started.runId, end: started.end };
}

describe("a user tool invoking host tools", () => {
  it("each invocation is sent with its sub-call's key and journaled; a resumed run sends nothing already answered", async () => {
    const seen: Pick<HostToolContext, "idempotencyKey" | "seq" | "attempt">[] = [];
    holding = true;
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true, hostTools: priceTools(seen) });
    try {
      const { id } = await t.engine.registerToolset({
        hostTools: PRICE,
        userTools: {
          tools: {
            quote: {
              description: "Prices two SKUs, then waits on a slow endpoint.",
              code: `import { shop } from "tapedeck:tools";
                export default async () => {
                  const [a, b] = await Promise.all([shop.price({ sku: "ab" }), shop.price({ sku: "abc" })]);
                  const held = await (await fetch("${base()}/v1/hold")).json();
                  const total: number = a.cents + b.cents;
                  return { total, held };
                };`,
              grants: { tools: ["shop.price"], ...HTTP_GRANT },
            },
          },
        },
      });
      const holdsBefore = hits("/v1/hold");
      const started = await start(t.engine, id, `import { tools } from "tapedeck:tools";\nexport default async () => tools.quote({});`);
      await heldOrEnded(started.end, holdsBefore);
      await t.engine.close();
      const { runId } = started;
      assert.deepEqual(seen.map((c) => c.idempotencyKey).sort(), [`${runId}/1.1`, `${runId}/1.2`], "the host tool saw each invocation's own key");
      assert.deepEqual(
        seen.map((c) => [c.seq, c.attempt]),
        [
          [1, 1],
          [1, 1],
        ],
      );
      assert.deepEqual(
        described(await (await t.reopen({ wake: false })).journal(runId), runId),
        ["/1.1 shop.price ok", "/1.2 shop.price ok"],
        "both invocations were journaled; the fetch in flight was not",
      );
      holding = false;
      const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, hostTools: priceTools(seen) });
      try {
        const [resumed] = await engine.resume(runId);
        assert.deepEqual(output(await resumed!.end), { total: 500, held: { held: false } });
        assert.equal(seen.length, 2, "the recorded invocations were not sent again");
        assert.deepEqual(described(await engine.journal(runId), runId), ["/1.1 shop.price ok", "/1.2 shop.price ok", "/1.3 http.fetch ok"]);
      } finally {
        await engine.close();
      }
    } finally {
      holding = true;
      await t.cleanup();
    }
  });
});

describe("a user tool invoking user tools", () => {
  it("the invoked tool's own host calls are journaled under the invocation's key; a resumed run re-runs both against what was recorded", async () => {
    holding = true;
    const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true });
    try {
      const { id } = await t.engine.registerToolset({
        userTools: {
          tools: {
            inner: {
              description: "Fetches items, then waits on a slow endpoint.",
              code: `export default async () => {
                const items = await (await fetch("${base()}/v1/items")).json();
                const held = await (await fetch("${base()}/v1/hold")).json();
                return { items, held };
              };`,
              outputSchema: { type: "object", properties: { items: OBJECT, held: OBJECT }, required: ["items", "held"] },
              grants: HTTP_GRANT,
            },
            outer: {
              description: "Calls tools.inner and says what it got.",
              code: `import { tools } from "tapedeck:tools";
                export default async () => {
                  const got = await tools.inner({});
                  return { got, keys: Object.keys(got.items).length };
                };`,
              grants: { tools: ["tools.inner"] },
            },
          },
        },
      });
      const itemsBefore = hits("/v1/items");
      const holdsBefore = hits("/v1/hold");
      const started = await start(t.engine, id, `import { tools } from "tapedeck:tools";\nexport default async () => tools.outer({});`);
      const { runId } = started;
      await heldOrEnded(started.end, holdsBefore);
      await t.engine.close();
      assert.deepEqual(
        described(await (await t.reopen({ wake: false })).journal(runId), runId),
        ["/1.1.1 http.fetch ok"],
        "the invoked tool's answered fetch was journaled under its invocation's key; the one in flight was not, nor the invocation",
      );
      holding = false;
      const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true });
      try {
        const [resumed] = await engine.resume(runId);
        assert.deepEqual(output(await resumed!.end), { got: { items: { items: [1, 2, 3] }, held: { held: false } }, keys: 1 });
        assert.equal(hits("/v1/items"), itemsBefore + 1, "the recorded fetch was not sent again");
        const holds = server.received.filter((r) => r.path === "/v1/hold").map((r) => r.headers["idempotency-key"]);
        assert.deepEqual(holds.slice(-2), [`${runId}/1.1.2`, `${runId}/1.1.2`], "the unanswered one was sent again with its nested key");
        assert.deepEqual(described(await engine.journal(runId), runId), ["/1.1.1 http.fetch ok", "/1.1.2 http.fetch ok", "/1.1 tools.inner ok"]);
      } finally {
        await engine.close();
      }
    } finally {
      holding = true;
      await t.cleanup();
    }
  });

  it("what an invoked user tool logs is journaled with the invoking call's lines, after the invoked tool's name", async () => {
    const t = await testEngine();
    try {
      const { id } = await t.engine.registerToolset({
        userTools: {
          tools: {
            inner: { description: "Logs, then answers.", code: `export default () => { console.log("inner ran"); console.warn("inner warns"); return 1; };` },
            outer: {
              description: "Logs around tools.inner.",
              code: `import { tools } from "tapedeck:tools";
                export default async () => { console.log("outer before"); const n = await tools.inner({}); console.log("outer after"); return n; };`,
              grants: { tools: ["tools.inner"] },
            },
          },
        },
      });
      const { runId, end } = await start(t.engine, id, `import { tools } from "tapedeck:tools";\nexport default async () => tools.outer({});`);
      assert.equal(output(await end), 1);
      const completed = (await t.engine.journal(runId)).find((e): e is Extract<JournalEntry, { kind: "call.completed" }> => e.kind === "call.completed");
      assert.deepEqual(completed?.logs, [
        { level: "log", message: "outer before" },
        { level: "log", message: "tools.inner: inner ran" },
        { level: "warn", message: "tools.inner: inner warns" },
        { level: "log", message: "outer after" },
      ]);
    } finally {
      await t.cleanup();
    }
  });

  it("invocations count against the invoking tool's toolCalls, and a cycle of user tools ends at the nesting limit with an error saying so", async () => {
    const t = await testEngine();
    try {
      const counted = `import { tools } from "tapedeck:tools";
        export default async (input: { n: number }) => {
          const out: string[] = [];
          for (let i = 0; i < input.n; i++) {
            try { out.push((await tools.leaf({})).leaf); } catch (e) { out.push((e as { code: string }).code); }
          }
          return out;
        };`;
      const cycle = (other: string) => `import { tools } from "tapedeck:tools";
        export default async (input: { depth: number }): Promise<number> => (await tools.${other}({ depth: input.depth + 1 })) + 1;`;
      const depth: JsonObject = { type: "object", properties: { depth: { type: "number" } }, required: ["depth"] };
      const { id } = await t.engine.registerToolset({
        userTools: {
          tools: {
            leaf: {
              description: "A leaf.",
              code: `export default () => ({ leaf: "ok" });`,
              outputSchema: { type: "object", properties: { leaf: { type: "string" } }, required: ["leaf"] },
            },
            fan: {
              description: "Invokes tools.leaf n times.",
              code: counted,
              inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
              grants: { tools: ["tools.leaf"] },
              limits: { toolCalls: 2 },
            },
            ping: {
              description: "Invokes tools.pong.",
              code: cycle("pong"),
              inputSchema: depth,
              outputSchema: { type: "number" },
              grants: { tools: ["tools.pong"] },
            },
            pong: {
              description: "Invokes tools.ping.",
              code: cycle("ping"),
              inputSchema: depth,
              outputSchema: { type: "number" },
              grants: { tools: ["tools.ping"] },
            },
          },
        },
      });
      const started = await start(
        t.engine,
        id,
        `import { tools, ToolError } from "tapedeck:tools";
export default async () => {
  const fanned = await tools.fan({ n: 3 });
  try { return { fanned, cycle: await tools.ping({ depth: 0 }) }; } catch (e) { return { fanned, cycle: e instanceof ToolError ? e.code + ": " + e.message : String(e) }; }
};`,
      );
      const { fanned, cycle: ended } = output(await started.end) as { fanned: string[]; cycle: string };
      assert.deepEqual(fanned, ["ok", "ok", "limit_exceeded"]);
      assert.match(ended, /^limit_exceeded: /);
      assert.match(ended, /tools\.ping → tools\.pong → tools\.ping → tools\.pong → tools\.ping/, "the error names the chain");
      assert.match(ended, /at most 4 deep/, "and the limit");
      const journal = described(await t.engine.journal(started.runId), started.runId);
      assert.deepEqual(
        journal.filter((line) => line.startsWith("/1.")),
        ["/1.1 tools.leaf ok", "/1.2 tools.leaf ok", "/1.3 tools.leaf limit_exceeded"],
      );
      assert.deepEqual(
        journal.filter((line) => line.startsWith("/2.")),
        ["/2.1.1.1.1 tools.ping limit_exceeded", "/2.1.1.1 tools.pong limit_exceeded", "/2.1.1 tools.ping limit_exceeded", "/2.1 tools.pong limit_exceeded"],
        "each level journaled its invocation",
      );
    } finally {
      await t.cleanup();
    }
  });
});

describe("invoked host and user tools meet their policies", () => {
  it("a host tool's rate limit and a user tool's approval rules apply to a user tool's invocations as to a script's calls", async () => {
    const t = await testEngine({ hostTools: priceTools([]) });
    try {
      const word: JsonObject = { type: "object", properties: { word: { type: "string" } }, required: ["word"] };
      const { id } = await t.engine.registerToolset({
        hostTools: PRICE,
        policies: {
          "shop.price": { rateLimit: { perMinute: 1 } },
          "tools.leaf": {
            approval: {
              kind: "rules",
              rules: [{ action: "deny", when: [{ pointer: "/word", matches: "^no" }], reason: "No means no" }],
              otherwise: { kind: "never" },
            },
          },
          "tools.asked": { approval: true },
        },
        userTools: {
          tools: {
            leaf: {
              description: "Says its word back.",
              code: `export default (input: { word: string }) => input.word;`,
              inputSchema: word,
              outputSchema: { type: "string" },
            },
            asked: { description: "Needs approval.", code: `export default () => "asked";` },
            relay: {
              description: "Invokes each of its tools, answering each outcome.",
              code: `import { shop, tools } from "tapedeck:tools";
                export default async () => {
                  const outcomes: string[] = [];
                  const calls = [() => shop.price({ sku: "a" }), () => shop.price({ sku: "b" }), () => tools.leaf({ word: "yes" }), () => tools.leaf({ word: "no" }), () => tools.asked({})];
                  for (const call of calls) {
                    try { await call(); outcomes.push("sent"); } catch (e) { outcomes.push((e as { code: string }).code + ": " + (e as Error).message); }
                  }
                  return outcomes;
                };`,
              grants: { tools: ["shop.price", "tools.leaf", "tools.asked"] },
            },
          },
        },
      });
      const started = await start(t.engine, id, `import { tools } from "tapedeck:tools";\nexport default async () => tools.relay({});`);
      const outcomes = output(await started.end) as string[];
      assert.deepEqual(outcomes.slice(0, 1), ["sent"]);
      assert.match(outcomes[1]!, /^rate_limited: /);
      assert.equal(outcomes[2], "sent");
      assert.match(outcomes[3]!, /^refused: tools\.leaf is refused by its approval rules: No means no/);
      assert.match(outcomes[4]!, /^refused: tools\.asked needs approval before each call/);
      assert.deepEqual(described(await t.engine.journal(started.runId), started.runId), [
        "/1.1 shop.price ok",
        "/1.2 shop.price rate_limited",
        "/1.3 tools.leaf ok",
        "/1.4 tools.leaf refused",
        "/1.5 tools.asked refused",
      ]);
    } finally {
      await t.cleanup();
    }
  });
});

describe("the example of docs/design/tool-library.md", () => {
  it("its toolset file registers, and a script's basket.receipt journals the keys the text says", async () => {
    const doc = readFileSync(new URL("../../../docs/design/tool-library.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("### Invoking other tools"));
    const block = /```json\n([\s\S]*?)\n```/.exec(section);
    assert.ok(block, "the section has a toolset file");
    const seen: Pick<HostToolContext, "idempotencyKey" | "seq" | "attempt">[] = [];
    const t = await testEngine({ hostTools: priceTools(seen) });
    try {
      const { id } = await t.engine.registerToolset(JSON.parse(block[1]!) as ToolsetSpec);
      const started = await start(t.engine, id, `import { basket } from "tapedeck:tools";\nexport default async () => basket.receipt({ skus: ["a", "b"] });`);
      assert.equal(output(await started.end), "2 items: 2.00");
      assert.deepEqual(described(await t.engine.journal(started.runId), started.runId).sort(), [
        "/1.1 basket.total ok",
        "/1.1.1 shop.price ok",
        "/1.1.2 shop.price ok",
      ]);
    } finally {
      await t.cleanup();
    }
  });
});

describe("registering a user tool that invokes host and user tools", () => {
  it("type-checks its code against the declarations of the host and user tools it is granted", async () => {
    const t = await testEngine({ hostTools: priceTools([]) });
    try {
      const inner: UserToolFileSpec = {
        description: "Doubles a number.",
        code: `export default (input: { n: number }) => ({ doubled: input.n * 2 });`,
        inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        outputSchema: { type: "object", properties: { doubled: { type: "number" } }, required: ["doubled"] },
      };
      const spec = (code: string): ToolsetSpec => ({
        hostTools: PRICE,
        userTools: { tools: { inner, outer: { description: "Uses both.", code, grants: { tools: ["shop.price", "tools.inner"] } } } },
      });
      const header = `import { shop, tools } from "tapedeck:tools";\n`;
      const wrongHost = await registrationError(t.engine, spec(`${header}export default async () => (await shop.price({ sku: 5 })).cents;`));
      assert.match(wrongHost, /userTools\.tools\["outer"\]\.code line 2, column \d+: .*number.*string/s);
      const wrongUser = await registrationError(
        t.engine,
        spec(`${header}export default async () => { const s: string = (await tools.inner({ n: 1 })).doubled; return s; };`),
      );
      assert.match(wrongUser, /userTools\.tools\["outer"\]\.code line 2, column \d+: Type 'number' is not assignable to type 'string'/);
      const { id } = await t.engine.registerToolset(
        spec(`${header}export default async () => (await shop.price({ sku: "abcd" })).cents + (await tools.inner({ n: 21 })).doubled;`),
      );
      const started = await start(t.engine, id, `import { tools } from "tapedeck:tools";\nexport default async () => tools.outer({});`);
      assert.equal(output(await started.end), 442);
    } finally {
      await t.cleanup();
    }
  });
});

/** Resolves once the first engine's request to `/v1/hold` is in flight; fails saying how the run ended if it ended first. */
async function heldOrEnded(end: Promise<RunEnd>, holdsBefore: number): Promise<void> {
  let held = false;
  const early = (how: string) => {
    if (!held) assert.fail(`the run ended before its request to /v1/hold: ${how}`);
  };
  const ended = end.then(
    (e) => early(JSON.stringify(e)),
    (error: unknown) => early(String(error)),
  );
  await Promise.race([until(() => hits("/v1/hold") > holdsBefore, "the first engine's request to /v1/hold"), ended]);
  held = true;
}

/** Resolves once `condition` holds; fails saying what did not happen within 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
