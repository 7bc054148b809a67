import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JournalEntry } from "@tapedeck/protocol";
import { findSecrets } from "./test-support/leak-scan.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { runScript, testEngine, testSandboxes } from "./test-support/engines.js";
import { join } from "node:path";

/**
 * Credentials injected into `fetch` by the engine: the host binding applies without the script
 * naming anything, the server gets the value, and the value is nowhere else — not in the
 * journal's arguments, not in the response the script sees (the server echoes it), not in the
 * database, its WAL or the key file's folder. A marker the script itself echoes proves the
 * scan would have found it.
 */

after(() => testSandboxes().close());

const TOKEN = "cred_bearer_value_5e8d1b2c";
const QUERY = "cred_query_value_9a4f7e";
const MARKER = "not_a_secret_marker_31c7";
const STALE = "cred_stale_value_0b7e44a1";
const FRESH = "cred_fresh_value_c93d12f8";

let server: LoopbackServer;
const held: (() => void)[] = [];
let heldArrived: (() => void) | undefined;
before(async () => {
  server = await startLoopbackServer({
    // Echoes what it got, credentials included, as a careless API would.
    "/echo": (req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ auth: req.headers.authorization ?? null, path: req.path })),
    // Takes only the fresh token: anything else is refused as an expired one would be.
    "/guarded": (req, res) =>
      req.headers.authorization === `Bearer ${FRESH}`
        ? res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }))
        : res.writeHead(401).end("token expired"),
    // Holds each request until the test lets it go (`release`), then answers like /guarded.
    "/held": (req, res) => {
      held.push(() =>
        req.headers.authorization === `Bearer ${FRESH}`
          ? res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }))
          : res.writeHead(401).end("token expired"),
      );
      heldArrived?.();
    },
    "/away": (_req, res) => res.writeHead(302, { location: `http://localhost:${server.port}/echo` }).end(),
  });
});
after(() => server.close());

const base = () => `http://127.0.0.1:${server.port}`;

/** An engine whose `http` tool may reach loopback, with a vault and a toolset allowing `allow`: what every test here starts from. */
async function vaultEngine(allow: readonly string[] = ["127.0.0.1"]) {
  const t = await testEngine();
  const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, masterKeyFile: join(t.dataDir, "master.key") });
  const spec = { http: { allow: [...allow] } };
  const { id } = await engine.registerToolset(spec);
  return {
    engine,
    id,
    spec,
    dataDir: t.dataDir,
    scope: { kind: "toolset", toolsetId: id } as const,
    close: async () => {
      await engine.close();
      await t.cleanup();
    },
  };
}
const script = () => `export default async () => {
  const r = await fetch("${base()}/echo?x=1");
  console.log("${MARKER}");
  return await r.json();
};`;

describe("credentials injected into fetch", () => {
  it("a bound bearer token reaches the server and is found nowhere the run leaves anything", async () => {
    const t = await testEngine();
    try {
      const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, masterKeyFile: join(t.dataDir, "master.key") });
      try {
        const { id } = await engine.registerToolset({ http: { allow: ["127.0.0.1", "localhost"] } });
        await engine.credentials.set({
          name: "API",
          scope: { kind: "toolset", toolsetId: id },
          hosts: ["127.0.0.1"],
          secret: { kind: "bearer", token: TOKEN },
        });
        const { runId, end } = await runScript(engine, { http: { allow: ["127.0.0.1", "localhost"] } }, script());
        assert.equal(server.received.at(-1)?.headers.authorization, `Bearer ${TOKEN}`);
        assert.deepEqual(end, { status: "completed", output: { auth: "Bearer [redacted: secret API]", path: "/echo?x=1" } });
        const journal = await engine.journal(runId);
        const scheduled = journal.find((e): e is Extract<JournalEntry, { kind: "call.scheduled" }> => e.kind === "call.scheduled")!;
        assert.deepEqual(scheduled.args, { url: `${base()}/echo?x=1`, method: "GET", headers: {} });
        assert.deepEqual(await findSecrets(engine, t.dataDir, [TOKEN]), []);
        assert.ok(
          (await findSecrets(engine, t.dataDir, [MARKER])).some((w) => w.includes(`run ${runId}`)),
          "control: the scan finds what the script logged",
        );
      } finally {
        await engine.close();
      }
    } finally {
      await t.cleanup();
    }
  });

  it("a run's own query credential wins over the toolset's; a redirect to another origin goes without it", async () => {
    const { engine, id, spec, dataDir, close } = await vaultEngine(["127.0.0.1", "localhost"]);
    try {
      await engine.credentials.set({
        name: "TS",
        scope: { kind: "toolset", toolsetId: id },
        hosts: ["127.0.0.1", "localhost"],
        secret: { kind: "bearer", token: TOKEN },
      });
      const started = await engine.start({
        toolset: id,
        source: `export default async () => { await signal("go"); return await (await fetch("${base()}/echo")).json(); };`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      await engine.credentials.set({
        name: "MINE",
        scope: { kind: "run", runId: started.runId },
        hosts: ["127.0.0.1"],
        secret: { kind: "query", param: "key", value: QUERY },
      });
      await engine.signal(started.runId, "go", null);
      const end = await started.end;
      assert.equal(server.received.at(-1)?.path, `/echo?key=${QUERY}`);
      assert.equal(server.received.at(-1)?.headers.authorization, undefined, "never merged: the toolset's token is not sent too");
      assert.deepEqual(end, { status: "completed", output: { auth: null, path: "/echo?key=[redacted: secret MINE]" } });

      // 127.0.0.1 → localhost is another origin: the toolset credential (bound to both) is not sent after the redirect.
      await engine.credentials.delete({ kind: "run", runId: started.runId }, "MINE");
      const { end: redirected } = await runScript(engine, spec, `export default async () => (await fetch("${base()}/away")).json();`);
      assert.equal(server.received.at(-2)?.headers.authorization, `Bearer ${TOKEN}`);
      assert.equal(server.received.at(-1)?.headers.authorization, undefined);
      assert.deepEqual(redirected, { status: "completed", output: { auth: null, path: "/echo" } });
      assert.deepEqual(await findSecrets(engine, dataDir, [TOKEN, QUERY]), []);
    } finally {
      await close();
    }
  });

  it("a 401 to the injected credential parks the call (credentials.expired); setting a renewed one sends it again with the same idempotency key", async () => {
    const { engine, id, scope, dataDir, close } = await vaultEngine();
    try {
      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      const events: string[] = [];
      engine.on((event) => events.push(event.type));
      const started = await engine.start({
        toolset: id,
        source: `export default async () => (await fetch("${base()}/guarded", { method: "POST", body: "charge" })).json();`,
      });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      const parked = await engine.settled(started.runId);
      assert.equal(parked?.status, "waiting");
      const wait = parked?.status === "waiting" ? parked.waits[0] : undefined;
      assert.equal(wait?.kind === "parked" ? wait.reason : wait?.kind, "credentials.expired");
      assert.match(wait?.kind === "parked" ? wait.message : "", /answered 401 Unauthorized to the credential "API"/);
      assert.deepEqual(events, ["credentials.expired", "run.waiting"]);
      const first = server.received.at(-1);

      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      const end = await engine.settled(started.runId, { next: true });
      assert.deepEqual(end, { status: "completed", output: { ok: true } });
      const second = server.received.at(-1);
      assert.deepEqual([first?.headers.authorization, second?.headers.authorization], [`Bearer ${STALE}`, `Bearer ${FRESH}`]);
      assert.equal(second?.headers["idempotency-key"], first?.headers["idempotency-key"], "the same key on both sends");
      assert.equal(second?.headers["idempotency-key"], `${started.runId}/1`);
      const kinds = (await engine.journal(started.runId)).map((e) => e.kind);
      assert.deepEqual(
        kinds.filter((k) => k.startsWith("call.")),
        ["call.scheduled", "call.parked", "call.decided", "call.completed"],
      );
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH]), []);
    } finally {
      await close();
    }
  });

  it("a request may name its credential: that one is sent (even where the host has several); one bound elsewhere or unknown is refused, and nothing is sent", async () => {
    const { engine, scope, spec, dataDir, close } = await vaultEngine();
    try {
      await engine.credentials.set({ name: "READ", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      await engine.credentials.set({ name: "WRITE", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      await engine.credentials.set({ name: "ELSEWHERE", scope, hosts: ["api.example.com"], secret: { kind: "bearer", token: TOKEN } });
      const before = server.received.length;
      const { end } = await runScript(
        engine,
        spec,
        `import { ToolError } from "tapedeck:tools";
        export default async () => {
          const codes: string[] = [];
          for (const credential of ["ELSEWHERE", "MISSING"]) {
            try { await fetch("${base()}/echo", { credential }); } catch (e) { codes.push((e as ToolError).code + ": " + (e as ToolError).message); }
          }
          try { await fetch("${base()}/echo"); } catch (e) { codes.push((e as ToolError).code); }
          const named = await (await fetch("${base()}/echo", { credential: "WRITE" })).json();
          return { codes, named };
        };`,
      );
      assert.equal(end.status, "completed");
      const output = end.status === "completed" ? (end.output as { codes: string[]; named: unknown }) : undefined;
      assert.match(output?.codes[0] ?? "", /^refused: The credential ELSEWHERE may only be sent to api\.example\.com, not to 127\.0\.0\.1/);
      assert.match(output?.codes[1] ?? "", /^credential_unavailable: No credential named MISSING/);
      assert.equal(output?.codes[2], "credential_unavailable", "unnamed, two credentials fit the host: neither is guessed");
      assert.deepEqual(output?.named, { auth: "Bearer [redacted: secret WRITE]", path: "/echo" });
      assert.equal(server.received.length, before + 1, "only the named request was sent");
      assert.equal(server.received.at(-1)?.headers.authorization, `Bearer ${FRESH}`);
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH, TOKEN]), []);
    } finally {
      await close();
    }
  });

  it("a credential past its known expiry time is not sent: the call parks at once, and renewing it sends the call", async () => {
    const { engine, id, scope, dataDir, close } = await vaultEngine();
    try {
      const set = await engine.credentials.set({
        name: "API",
        scope,
        hosts: ["127.0.0.1"],
        secret: { kind: "bearer", token: STALE },
        expiresAt: Date.now() - 1_000,
      });
      assert.equal(typeof set.expiresAt, "number");
      assert.equal((await engine.credentials.list()).find((c) => c.name === "API")?.expiresAt, set.expiresAt);
      const before = server.received.length;
      const started = await engine.start({ toolset: id, source: `export default async () => (await fetch("${base()}/guarded")).json();` });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      const parked = await engine.settled(started.runId);
      const wait = parked?.status === "waiting" ? parked.waits[0] : undefined;
      assert.equal(wait?.kind === "parked" && wait.reason, "credentials.expired");
      assert.match(wait?.kind === "parked" ? wait.message : "", /The credential "API" for 127\.0\.0\.1 expired at .*, so nothing was sent/);
      assert.equal(server.received.length, before, "nothing was sent with the expired credential");
      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH }, expiresAt: Date.now() + 3_600_000 });
      assert.deepEqual(await engine.settled(started.runId, { next: true }), { status: "completed", output: { ok: true } });
      assert.equal(server.received.length, before + 1);
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH]), []);
    } finally {
      await close();
    }
  });

  it("a credential renewed while a request was in flight with the old one: the 401 sends it again at once with the new one, without parking", async () => {
    const { engine, id, scope, dataDir, close } = await vaultEngine();
    try {
      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      const arrived = new Promise<void>((resolve) => (heldArrived = resolve));
      const started = await engine.start({ toolset: id, source: `export default async () => (await fetch("${base()}/held")).json();` });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      await arrived;
      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      const again = new Promise<void>((resolve) => (heldArrived = resolve));
      held.shift()!();
      await again;
      held.shift()!();
      assert.deepEqual(await started.end, { status: "completed", output: { ok: true } });
      const kinds = (await engine.journal(started.runId)).map((e) => e.kind);
      assert.ok(!kinds.includes("call.parked"), kinds.join(","));
      assert.deepEqual(
        server.received.slice(-2).map((r) => r.headers.authorization),
        [`Bearer ${STALE}`, `Bearer ${FRESH}`],
      );
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH]), []);
    } finally {
      heldArrived = undefined;
      await close();
    }
  });

  it("a parked call waits for its own credential: setting another leaves it parked; a derived toolset's runs use, and are renewed by, its base's credential", async () => {
    const { engine, id: firstId, dataDir, close } = await vaultEngine();
    try {
      const first = { id: firstId };
      // A workflow saved on it derives a toolset (what an agent's save_workflow does).
      const derived = await engine.saveWorkflow({
        toolset: first.id,
        name: "noop",
        description: "Does nothing.",
        source: `export default async (input: {}) => ({})`,
        input: { type: "object" },
        output: { type: "object" },
      });
      assert.equal(derived.kind, "saved");
      if (derived.kind !== "saved") return;
      assert.notEqual(derived.id, first.id);
      const scope = { kind: "toolset", toolsetId: first.id } as const;
      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: STALE } });
      const started = await engine.start({ toolset: derived.id, source: `export default async () => (await fetch("${base()}/guarded")).json();` });
      assert.equal(started.kind, "started");
      if (started.kind !== "started") return;
      const parked = await engine.settled(started.runId);
      const wait = parked?.status === "waiting" ? parked.waits[0] : undefined;
      assert.deepEqual(
        wait?.kind === "parked" ? [wait.reason, wait.credential] : wait,
        ["credentials.expired", "API"],
        "the base's credential was sent for the derived toolset's run",
      );
      const sent = server.received.length;

      await engine.credentials.set({ name: "OTHER", scope, hosts: ["other.example.com"], secret: { kind: "bearer", token: TOKEN } });
      assert.equal((await engine.getRun(started.runId)).status, "waiting", "another credential renews nothing");
      assert.equal(server.received.length, sent);
      assert.ok(!(await engine.journal(started.runId)).some((e) => e.kind === "call.decided"));

      await engine.credentials.set({ name: "API", scope, hosts: ["127.0.0.1"], secret: { kind: "bearer", token: FRESH } });
      assert.deepEqual(await engine.settled(started.runId, { next: true }), { status: "completed", output: { ok: true } });
      assert.deepEqual(await findSecrets(engine, dataDir, [STALE, FRESH, TOKEN]), []);
    } finally {
      await close();
    }
  });
});
