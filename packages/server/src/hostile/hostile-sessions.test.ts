import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DirectTools, Tapedeck } from "@tapedeck/sdk";
import { createKey } from "../http/test-support/serve-child.js";
import { failure } from "../http/test-support/failure.js";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Direct tool sessions outside the caller's scope (issue 23, item 17), through a real `tapedeck
 * serve`: another end user's token, a key limited to another namespace, a key limited to other
 * labels, and a key of the same end user without the session's labels ask about alice's session
 * `conv1` (waiting for an approval) on every `/v1/sessions/{session}/…` route — enumerated from
 * the OpenAPI document, so a new route not walked here fails — and through the SDK's session
 * calls. Each answer is byte for byte the 404 of a session that does not exist, nothing of the
 * victim's session changes, and the server keeps serving.
 */
let hostile: HostileServer;
let toolset: string;
let alices: DirectTools;
const intruders: { name: string; credential: string }[] = [];

const SESSION = "conv1";
const MISSING = "never-bound";

before(async () => {
  hostile = await startHostileServer();
  toolset = (
    await hostile.admin.toolsets.create({
      hostTools: { probe: { echo: { description: "Answers its arguments." } } },
      policies: { "probe.echo": { approval: true } },
    })
  ).id;
  alices = await hostile.admin.namespace("alice").directTools({ toolset, session: SESSION, labels: { team: "a" } });
  const pending = await alices.call("generic", "probe_echo", { secret: "alice's words" }, "alice-1");
  assert.equal(pending.status, "pending", JSON.stringify(pending));
  // The same name without a namespace, labelled team=a: what a key limited to labels addresses.
  const shared = await hostile.admin.directTools({ toolset, session: SESSION, labels: { team: "a" } });
  assert.equal((await shared.call("generic", "probe_echo", { secret: "shared words" }, "shared-1")).status, "pending");
  const dir = hostile.server.dataDir;
  intruders.push({ name: "bob's token", credential: (await hostile.admin.tokens.create({ namespace: "bob", ttlSeconds: 600 })).token });
  intruders.push({ name: "a key limited to namespace bob", credential: await createKey(dir, "--namespace", "bob") });
  intruders.push({ name: "a key limited to team=blue", credential: await createKey(dir, "--label", "team=blue") });
  intruders.push({ name: "alice's key limited to team=b", credential: await createKey(dir, "--namespace", "alice", "--label", "team=b") });
});

after(async () => {
  await hostile.close();
});

interface Request {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** How to ask each route about session `name`. A `/v1/sessions/{session}` route missing here fails the test. */
const ROUTES: Readonly<Record<string, (name: string) => Request>> = {
  "POST /v1/sessions/{session}/calls": (name) => ({
    method: "POST",
    path: `/v1/sessions/${name}/calls`,
    body: { binding: alices.binding, api: "generic", toolCallId: "intruder-1", name: "probe_echo", input: { secret: "intruder" } },
  }),
  "GET /v1/sessions/{session}/approvals": (name) => ({ method: "GET", path: `/v1/sessions/${name}/approvals` }),
  "POST /v1/sessions/{session}/calls/{seq}/approve": (name) => ({ method: "POST", path: `/v1/sessions/${name}/calls/1/approve`, body: { always: true } }),
  "POST /v1/sessions/{session}/calls/{seq}/reject": (name) => ({ method: "POST", path: `/v1/sessions/${name}/calls/1/reject`, body: {} }),
  "GET /v1/sessions/{session}/blobs/{handle}": (name) => ({ method: "GET", path: `/v1/sessions/${name}/blobs/blob_${"0".repeat(40)}` }),
};

/** Routes that make what they name in the caller's own namespace instead of finding it: asserted apart. */
const CREATES = new Set(["POST /v1/sessions/{session}/bind"]);

async function ask(request: Request, credential: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${hostile.server.url}${request.path}`, {
    method: request.method,
    headers: { authorization: `Bearer ${credential}`, ...(request.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  return { status: response.status, body: await response.text() };
}

/** What alice's session looks like to its owner: nothing an intruder does may change it. */
async function snapshot(): Promise<unknown> {
  const runs = await hostile.admin.runs.list({ labels: { team: "a" } });
  const journals = await Promise.all(runs.map((run) => hostile.admin.runs.journal(run.id, { limit: 1000 })));
  return { runs, journals, approvals: await alices.pending() };
}

describe("direct sessions outside the caller's scope (a real server)", () => {
  it("every /v1/sessions/{session}/… route answers another tenant's session as a missing one, byte for byte, and changes nothing", async () => {
    const doc = (await (await fetch(`${hostile.server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
      path.startsWith("/v1/sessions/{session}") ? Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`) : [],
    );
    const unwalked = routes.filter((route) => !(route in ROUTES) && !CREATES.has(route));
    assert.deepEqual(unwalked, [], "a session route this test does not walk");
    const before = await snapshot();
    for (const intruder of intruders) {
      for (const [route, request] of Object.entries(ROUTES)) {
        const missing = await ask(request(MISSING), intruder.credential);
        assert.equal(missing.status, 404, `${intruder.name}, ${route} of a missing session: ${missing.body}`);
        const victim = await ask(request(SESSION), intruder.credential);
        assert.deepEqual(
          { status: victim.status, body: victim.body.replaceAll(SESSION, "<session>") },
          { status: 404, body: missing.body.replaceAll(MISSING, "<session>") },
          `${intruder.name}, ${route}`,
        );
      }
    }
    assert.deepEqual(await snapshot(), before, "alice's session is untouched");
    await hostile.assertStillServing();
  });

  it("the SDK's session calls fail as for a missing session, and a bind makes the intruder's own session, never reaching alice's", async () => {
    const before = await snapshot();
    for (const intruder of intruders) {
      const client: Tapedeck = hostile.server.client(intruder.credential);
      for (const call of [() => client.approvals.approveSessionCall(SESSION, 1, { always: true }), () => client.approvals.rejectSessionCall(SESSION, 1)]) {
        const error = await failure(call());
        assert.deepEqual([error.status, error.code], [404, "not_found"], `${intruder.name}: ${error.message}`);
      }
      assert.deepEqual(
        (await client.approvals.sessions()).map((approval) => approval.sessionId),
        [],
        `${intruder.name} lists no session approval of alice's`,
      );
    }
    // Bound last: bob's token and bob's key share a namespace, so the first bind makes the session the other then finds.
    for (const intruder of intruders) {
      const client: Tapedeck = hostile.server.client(intruder.credential);
      const bound = await client.directTools({ toolset, session: SESSION }).then(
        (tools) => tools,
        (error: unknown) => error,
      );
      if (bound instanceof Error) assert.match(bound.message, /^No session "conv1": bind tools in it first/, intruder.name);
      else assert.deepEqual(await (bound as DirectTools).pending(), [], `${intruder.name} bound a session of its own, with nothing pending`);
    }
    assert.deepEqual(await snapshot(), before, "alice's session is untouched");
    await hostile.assertStillServing();
  });
});
