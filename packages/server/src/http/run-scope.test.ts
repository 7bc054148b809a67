import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TapedeckError, type AgentTools, type Run, type Tapedeck } from "@tapedeck/sdk";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Every path that takes a run id answers a run outside the caller's scope exactly as a run that
 * does not exist, and changes nothing: each API route (enumerated from the server's OpenAPI
 * document, so a new route that takes a run id and is not walked here fails this test), each SDK
 * method of the resources that take run ids (enumerated from their prototypes, likewise), each
 * agent tool that takes a run id (enumerated from their definitions), `scenario.from_run`, the
 * credentials of a run, fork parents, approvals, and the child ids a script's workflow calls name.
 * Callers: a key limited to another namespace, a key limited to other labels, an end user's token,
 * and agents of the same end user with other labels or of another end user.
 */

const MISSING = "run_0000000000000000000000000";

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;
let workflowToolset: string;
/** Alice's runs: one completed (output, journal), one waiting for an approval and then a signal. */
let done: Run;
let open: Run;
const intruders: { name: string; credential: string }[] = [];

const SPEC = { hostTools: { ops: { deploy: { description: "Deploys.", inputSchema: { type: "object" } } } }, policies: { "ops.deploy": { approval: true } } };

before(async () => {
  server = await startServeChild({ hostModule: `export const ops = { deploy: async () => "deployed" };` });
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create(SPEC)).id;
  const start = async (source: string): Promise<Run> => {
    const started = await admin.runs.start({ toolset, source, namespace: "alice", labels: { agent: "a", conversation: "victim" } });
    return started.kind === "started" ? started.run : assert.fail("refused");
  };
  done = await admin.runs.get((await start(`export default async () => { console.log("secret log"); return { secret: 42 }; };`)).id, { wait: 30 });
  assert.equal(done.status, "completed");
  open = await admin.runs.get(
    (await start(`import { ops } from "tapedeck:tools";\nexport default async () => { await ops.deploy({}); return signal<string>("go"); };`)).id,
    { wait: 30 },
  );
  assert.equal(open.status, "waiting");
  const saved = await admin.toolsets.saveWorkflow(toolset, {
    name: "w",
    description: "Waits for go.",
    code: `export default async () => signal<number>("go");`,
    input: { type: "object" },
    output: { type: "number" },
    signals: { go: { type: "number" } },
  });
  workflowToolset = saved.kind === "saved" ? saved.id : assert.fail("refused");
  intruders.push({ name: "a key limited to namespace bob", credential: await createKey(server.dataDir, "--namespace", "bob") });
  intruders.push({ name: "a key limited to team=blue", credential: await createKey(server.dataDir, "--label", "team=blue") });
  intruders.push({ name: "bob's token", credential: (await admin.tokens.create({ namespace: "bob", ttlSeconds: 600 })).token });
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** What the victim's runs look like to their owner: nothing a walk does may change it. */
async function snapshot(): Promise<unknown> {
  const runs = await Promise.all([done, open].map((run) => admin.runs.get(run.id)));
  const journals = await Promise.all([done, open].map((run) => admin.runs.journal(run.id, { limit: 1000 })));
  return { runs, journals, approvals: await admin.approvals.pending(open), credentials: await admin.credentials.list() };
}

/** An answer with the run id it was asked about replaced, so a victim's answer compares to a missing run's. */
function anonymous(text: string, runId: string): string {
  return text.replaceAll(runId, "<run>");
}

// ---- the API, route by route ----

interface Request {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** How to ask each route that takes a run id about `id`. A route that takes one and is missing here fails the test. */
const ROUTES: Readonly<Record<string, (id: string) => Request>> = {
  "GET /v1/runs/{id}": (id) => ({ method: "GET", path: `/v1/runs/${id}?wait=1` }),
  "GET /v1/runs/{id}/journal": (id) => ({ method: "GET", path: `/v1/runs/${id}/journal` }),
  "GET /v1/runs/{id}/output": (id) => ({ method: "GET", path: `/v1/runs/${id}/output` }),
  "GET /v1/runs/{id}/journal/{index}": (id) => ({ method: "GET", path: `/v1/runs/${id}/journal/0` }),
  "GET /v1/runs/{id}/events": (id) => ({ method: "GET", path: `/v1/runs/${id}/events` }),
  "POST /v1/runs/{id}/cancel": (id) => ({ method: "POST", path: `/v1/runs/${id}/cancel`, body: { reason: "intruder" } }),
  "POST /v1/runs/{id}/signal": (id) => ({ method: "POST", path: `/v1/runs/${id}/signal`, body: { name: "go", payload: "intruder" } }),
  "POST /v1/runs/{id}/fork": (id) => ({ method: "POST", path: `/v1/runs/${id}/fork`, body: { source: "export default async () => 1;" } }),
  "GET /v1/approvals": (id) => ({ method: "GET", path: `/v1/approvals?run=${id}` }),
  "POST /v1/runs/{id}/calls/{seq}/approve": (id) => ({ method: "POST", path: `/v1/runs/${id}/calls/1/approve`, body: {} }),
  "POST /v1/runs/{id}/calls/{seq}/reject": (id) => ({ method: "POST", path: `/v1/runs/${id}/calls/1/reject`, body: {} }),
  "POST /v1/test": (id) => ({ method: "POST", path: "/v1/test", body: { toolset, source: "export default async () => 1;", scenario: { from_run: id } } }),
  "POST /v1/credentials": (id) => ({
    method: "POST",
    path: "/v1/credentials",
    body: { name: "stolen", kind: "bearer", value: "tok_intruder", hosts: ["api.example.com"], run: id },
  }),
  "DELETE /v1/credentials/{name}": (id) => ({ method: "DELETE", path: `/v1/credentials/stolen?run=${id}` }),
};

/** Names that hold a run id in a route's parameters or body. */
const RUN_ID_NAMES = new Set(["run", "runId", "run_id", "from_run", "parent"]);

type Schema = { readonly properties?: Readonly<Record<string, Schema>>; readonly items?: Schema };
type Operation = {
  readonly parameters?: readonly { readonly name: string }[];
  readonly requestBody?: { readonly content?: Readonly<Record<string, { readonly schema?: Schema }>> };
};

function schemaNamesRunId(schema: Schema | undefined): boolean {
  if (schema === undefined) return false;
  return Object.entries(schema.properties ?? {}).some(([name, inner]) => RUN_ID_NAMES.has(name) || schemaNamesRunId(inner)) || schemaNamesRunId(schema.items);
}

function takesRunId(path: string, operation: Operation): boolean {
  if (/\/runs\/\{[^}]+\}/.test(path)) return true;
  if ((operation.parameters ?? []).some((parameter) => RUN_ID_NAMES.has(parameter.name))) return true;
  return Object.values(operation.requestBody?.content ?? {}).some((content) => schemaNamesRunId(content.schema));
}

async function ask(request: Request, credential: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${server.url}${request.path}`, {
    method: request.method,
    headers: { authorization: `Bearer ${credential}`, ...(request.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  return { status: response.status, body: await response.text() };
}

// ---- the SDK, method by method ----

/** How to call each SDK method of the resources that take run ids, or why it takes none. A method missing here fails the test. */
const SDK: Readonly<Record<string, ((client: Tapedeck, id: string) => Promise<unknown>) | "takes no run id">> = {
  "runs.start": "takes no run id",
  "runs.list": "takes no run id",
  "runs.get": (client, id) => client.runs.get(id, { wait: 1 }),
  "runs.journal": (client, id) => client.runs.journal(id),
  "runs.entry": (client, id) => client.runs.entry(id, 0),
  "runs.output": (client, id) => client.runs.output(id),
  "runs.cancel": (client, id) => client.runs.cancel(id, { reason: "intruder" }),
  "runs.signal": (client, id) => client.runs.signal(id, { name: "go", payload: "intruder" }),
  "runs.fork": (client, id) => client.runs.fork(id, { source: "export default async () => 1;" }),
  "approvals.pending": (client, id) => client.approvals.pending({ id }),
  "approvals.approve": (client, id) => client.approvals.approve(id, 1),
  "approvals.reject": (client, id) => client.approvals.reject(id, 1),
  // Direct tool sessions are named by the harness, in the caller's namespace (direct-tools.test.ts walks their scope).
  "approvals.sessions": "takes no run id",
  "approvals.approveSessionCall": "takes no run id",
  "approvals.rejectSessionCall": "takes no run id",
  "credentials.set": (client, id) => client.credentials.set({ name: "stolen", kind: "bearer", value: "tok_intruder", hosts: ["api.example.com"], run: id }),
  "credentials.delete": (client, id) => client.credentials.delete({ name: "stolen", run: id }),
  "credentials.list": "takes no run id",
  "credentials.rotateKey": "takes no run id",
  test: (client, id) => client.test({ toolset, source: "export default async () => 1;", scenario: { from_run: id } }),
};

/** The methods of the client's resources that may take a run id (and the client's own `test`). */
function sdkMethods(client: Tapedeck): string[] {
  const resources = { runs: client.runs, approvals: client.approvals, credentials: client.credentials };
  const methods = Object.entries(resources).flatMap(([name, resource]) =>
    Object.getOwnPropertyNames(Object.getPrototypeOf(resource) as object)
      .filter((method) => method !== "constructor")
      .map((method) => `${name}.${method}`),
  );
  return [...methods, "test"];
}

async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    return `resolved ${JSON.stringify(await call)}`;
  } catch (error) {
    return TapedeckError.is(error) ? `${error.status} ${error.code}: ${error.message}` : `threw ${String(error)}`;
  }
}

// ---- the agent tools, tool by tool ----

/** How to ask each agent tool that takes a run id about `id`. A tool whose input has `run_id` (or a scenario) and is missing here fails the test. */
const AGENT_CALLS: Readonly<Record<string, readonly ((id: string) => unknown)[]>> = {
  get_run: [(id) => ({ run_id: id }), (id) => ({ run_id: id, entry: 0 }), (id) => ({ run_id: id, offset: 0 }), (id) => ({ run_id: id, wait: 1 })],
  signal_run: [(id) => ({ run_id: id, name: "go", payload: "intruder" })],
  cancel_run: [(id) => ({ run_id: id })],
  retry_run: [(id) => ({ run_id: id, code: "export default async () => 1;" })],
  test_script: [(id) => ({ code: "export default async () => 1;", scenario: { from_run: id } })],
};

describe("a run outside the caller's scope is a run that does not exist, on every path that takes a run id", () => {
  it("every API route that takes a run id (from the OpenAPI document) answers as for a missing run, and changes nothing", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => takesRunId(path, operation))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(
      routes.filter((route) => !(route in ROUTES)),
      [],
      "routes that take a run id and that this test does not walk: add them to ROUTES",
    );
    assert.deepEqual(
      Object.keys(ROUTES).filter((route) => !routes.includes(route)),
      [],
      "routes walked here that the OpenAPI document no longer has (or no longer marks as taking a run id)",
    );
    const before = await snapshot();
    for (const { name, credential } of intruders) {
      for (const route of routes) {
        const walk = ROUTES[route]!;
        const missing = await ask(walk(MISSING), credential);
        assert.equal(missing.status, 404, `${name}, ${route} on a run that does not exist: ${missing.body}`);
        for (const victim of [done, open]) {
          const answer = await ask(walk(victim.id), credential);
          assert.deepEqual(
            { status: answer.status, body: anonymous(answer.body, victim.id) },
            { status: missing.status, body: anonymous(missing.body, MISSING) },
            `${name}, ${route} on alice's ${victim.status} run`,
          );
        }
      }
    }
    assert.deepEqual(await snapshot(), before, "no walk changed alice's runs, approvals or credentials");
  });

  it("every SDK method that takes a run id fails as for a missing run, and changes nothing", async () => {
    const methods = sdkMethods(admin);
    assert.deepEqual(
      methods.filter((method) => !(method in SDK)),
      [],
      "SDK methods this test does not know: walk them, or say they take no run id",
    );
    const before = await snapshot();
    for (const { name, credential } of intruders) {
      const client = server.client(credential);
      for (const method of methods) {
        const call = SDK[method]!;
        if (call === "takes no run id") continue;
        const missing = await outcome(call(client, MISSING));
        assert.match(missing, /^404 not_found: /, `${name}, ${method} on a run that does not exist`);
        for (const victim of [done, open])
          assert.equal(
            anonymous(await outcome(call(client, victim.id)), victim.id),
            anonymous(missing, MISSING),
            `${name}, ${method} on alice's ${victim.status} run`,
          );
      }
    }
    // Alice's own client (another end user's namespace) and a client of the admin key for bob.
    for (const method of methods) {
      const call = SDK[method]!;
      if (call === "takes no run id") continue;
      const bob = admin.namespace("bob");
      const missing = await outcome(call(bob, MISSING));
      for (const victim of [done, open])
        assert.equal(anonymous(await outcome(call(bob, victim.id)), victim.id), anonymous(missing, MISSING), `namespace("bob"), ${method}`);
    }
    assert.deepEqual(await snapshot(), before);
  });

  it("every agent tool that takes a run id answers another conversation's or another user's run as missing (isError), and changes nothing", async () => {
    const agents: { name: string; tools: AgentTools }[] = [
      { name: "alice's agent in another conversation", tools: admin.namespace("alice").agentTools({ toolset, labels: { agent: "a", conversation: "other" } }) },
      { name: "bob's agent with alice's labels", tools: admin.namespace("bob").agentTools({ toolset, labels: { agent: "a", conversation: "victim" } }) },
    ];
    const definitions = agents[0]!.tools.definitions;
    const takingRunIds = definitions
      .filter((d) => "run_id" in (d.inputSchema.properties ?? {}) || "scenario" in (d.inputSchema.properties ?? {}))
      .map((d) => d.name);
    assert.deepEqual(
      takingRunIds.filter((name) => !(name in AGENT_CALLS)),
      [],
      "agent tools that take a run id and that this test does not walk",
    );
    const before = await snapshot();
    let call = 0;
    for (const { name, tools } of agents) {
      for (const tool of takingRunIds) {
        for (const input of AGENT_CALLS[tool]!) {
          const missing = await tools.handle(tool, input(MISSING), { toolCallId: `walk-${call++}` });
          assert.equal(missing.isError, true, `${name}, ${tool} on a run that does not exist: ${missing.content}`);
          for (const victim of [done, open]) {
            const answer = await tools.handle(tool, input(victim.id), { toolCallId: `walk-${call++}` });
            assert.deepEqual(
              [answer.isError, anonymous(answer.content, victim.id), answer.run],
              [true, anonymous(missing.content, MISSING), undefined],
              `${name}, ${tool}(${JSON.stringify(input("…"))}) on alice's ${victim.status} run`,
            );
          }
        }
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  it("a script's workflow call that names another tenant's run as its child fails as for a missing one, and sends nothing", async () => {
    const bob = server.client(intruders[0]!.credential);
    const signalled = async (id: string): Promise<unknown> => {
      const source = `export default async () => { try { await workflows.w.signal(${JSON.stringify(id)}, "go", 7); return "sent"; } catch (e: any) { return [e.code, e.message]; } };`;
      const started = await bob.runs.start({ toolset: workflowToolset, source });
      const run = started.kind === "started" ? started.run : assert.fail("refused");
      const ended = await bob.runs.get(run.id, { wait: 30 });
      assert.equal(ended.status, "completed", JSON.stringify(ended.error));
      return JSON.parse(anonymous(JSON.stringify(ended.output), id));
    };
    const missing = await signalled(MISSING);
    assert.notEqual(missing, "sent");
    for (const victim of [done, open]) assert.deepEqual(await signalled(victim.id), missing, `alice's ${victim.status} run`);
  });

  it("alice's runs go on as if no one had tried: the approval is hers to give, and no intruder's signal was kept", async () => {
    await admin.approvals.approve(open.id, 1);
    const after = await admin.runs.get(open.id, { wait: 30 });
    assert.deepEqual(
      [after.status, after.waits?.map((wait) => wait.kind)],
      ["waiting", ["signal"]],
      "the run waits for its own signal: none of the intruders' was kept",
    );
    await admin.runs.signal(open.id, { name: "go", payload: "alice's" });
    assert.equal((await admin.runs.get(open.id, { wait: 30 })).output, "alice's");
  });
});
