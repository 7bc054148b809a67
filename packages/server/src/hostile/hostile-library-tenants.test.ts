import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { createKey } from "../http/test-support/serve-child.js";
import { failure } from "../http/test-support/failure.js";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Tenants reaching each other's library data (issue 23, items 2 and 4) through a real `tapedeck
 * serve`: keys limited to different labels share no workspace or memory (they are refused the
 * library's data tools, which every run without a namespace would share), and one end user's
 * memory search scores do not move with what another writes.
 * After each attack the server is up, a victim's run completes, and the data of the tenant
 * attacked is unchanged.
 */
let hostile: HostileServer;
let library: string;
let red: { key: string; client: Tapedeck };
let blue: { key: string; client: Tapedeck };

const WRITE_SECRET = `import { files, memory } from "tapedeck:tools";
export default async (input: { word: string }) => {
  await files.write({ path: "secret.md", content: input.word });
  await memory.write({ path: "secret.md", content: "the secret word is " + input.word });
  return "written";
};`;

const READ_SECRET = `import { files, memory } from "tapedeck:tools";
export default async () => ({
  file: (await files.read({ path: "secret.md" })).content,
  memory: (await memory.read({ path: "secret.md" })).content,
});`;

before(async () => {
  hostile = await startHostileServer();
  library = (await hostile.admin.toolsets.create({ library: { files: {}, memory: {}, json: {} } })).id;
  const redKey = await createKey(hostile.server.dataDir, "--label", "team=red");
  const blueKey = await createKey(hostile.server.dataDir, "--label", "team=blue");
  red = { key: redKey, client: hostile.server.client(redKey) };
  blue = { key: blueKey, client: hostile.server.client(blueKey) };
});

after(async () => {
  await hostile.close();
});

/** Starts `source` with `client` and waits for its output; fails unless it completes. */
async function output(client: Tapedeck, start: Parameters<Tapedeck["runs"]["start"]>[0]): Promise<unknown> {
  const started = await client.runs.start(start);
  if (started.kind !== "started") return assert.fail(started.diagnostics.map((d) => d.message).join("\n"));
  const run = await client.runs.get(started.run.id, { wait: 30 });
  assert.equal(run.status, "completed", JSON.stringify(run));
  return run.output;
}

/** The operator's namespace-less files and memory still hold what it wrote: nothing a refused key did reached them. */
async function assertOperatorDataKept(word: string): Promise<void> {
  assert.deepEqual(await output(hostile.admin, { toolset: library, source: READ_SECRET }), { file: word, memory: `the secret word is ${word}` });
}

/** A 403 that says the key is limited to labels and what to use instead. */
function assertLabelRefusal(error: { status: number; code: string; message: string }, action: RegExp): void {
  assert.deepEqual([error.status, error.code], [403, "forbidden"], error.message);
  assert.match(error.message, /^This key is limited to labels, not to a namespace, so it cannot use the toolset's files\.\w+/);
  assert.match(error.message, action);
  assert.match(error.message, /Use a key or token limited to a namespace \(tapedeck keys create --namespace <end user>/);
}

describe("library data between tenants (a real server)", () => {
  it("keys limited to different labels share no workspace or memory: each is refused the library's data tools, and the operator's data is untouched", async () => {
    await output(hostile.admin, { toolset: library, source: WRITE_SECRET, input: { word: "operator-owl" } });
    for (const tenant of [red, blue]) {
      const start = await failure(tenant.client.runs.start({ toolset: library, source: WRITE_SECRET, input: { word: "red-fox" } }));
      assertLabelRefusal(start, /starting a run would reach the workspace and memory that every run without a namespace shares/);
      const read = await failure(tenant.client.runs.start({ toolset: library, source: READ_SECRET }));
      assertLabelRefusal(read, /starting a run/);
      assert.deepEqual(await tenant.client.runs.list(), [], "no run was started");
    }
    // The rest of the library stays open to such keys: json keeps nothing.
    const json = (await hostile.admin.toolsets.create({ library: { json: {} } })).id;
    const parsed = await output(red.client, {
      toolset: json,
      source: `import { json } from "tapedeck:tools"; export default async () => (await json.parse({ text: "[1]" })).value;`,
    });
    assert.deepEqual(parsed, [1]);
    await assertOperatorDataKept("operator-owl");
    await hostile.assertStillServing();
  });

  it("a key limited to labels cannot fork an operator's run it sees into the shared space, nor reach it through a user tool's workspace grant", async () => {
    const shared = await hostile.admin.runs.start({ toolset: library, source: READ_SECRET, labels: { team: "red" } });
    const sharedId = shared.kind === "started" ? shared.run.id : assert.fail();
    assert.equal((await red.client.runs.get(sharedId, { wait: 30 })).status, "completed", "the red key sees the operator's run");
    assertLabelRefusal(await failure(red.client.runs.fork(sharedId, { source: READ_SECRET })), /forking a run would reach/);
    const granted = await hostile.admin.toolsets.create({
      userTools: {
        peek: {
          secret: {
            description: "Reads secret.md of the workspace.",
            code: `import { workspace } from "tapedeck:tools";
export default async (input: { [key: string]: unknown }) => ((await workspace.read({ path: "secret.md" })) as { content: string }).content;`,
            grants: { workspace: "ro" },
          },
        },
      },
    });
    const peek = await failure(
      red.client.runs.start({ toolset: granted.id, source: `import { peek } from "tapedeck:tools"; export default async () => peek.secret({});` }),
    );
    assert.deepEqual([peek.status, peek.code], [403, "forbidden"], peek.message);
    assert.match(peek.message, /cannot use the toolset's peek\.secret: starting a run would reach/);
    await assertOperatorDataKept("operator-owl");
    await hostile.assertStillServing();
  });

  it("a key limited to labels cannot bind the library in a session, nor call it in one an operator labelled for it", async () => {
    assertLabelRefusal(await failure(red.client.directTools({ toolset: library, session: "red-conv" })), /binding them in a session would reach/);
    const operators = await hostile.admin.directTools({ toolset: library, session: "red-shared", labels: { team: "red" } });
    const call = await fetch(`${hostile.server.url}/v1/sessions/red-shared/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${red.key}`, "content-type": "application/json" },
      body: JSON.stringify({ binding: operators.binding, api: "generic", toolCallId: "steal-1", name: "files_read", input: { path: "secret.md" } }),
    });
    const body = (await call.json()) as { error: { code: string; message: string } };
    assert.equal(call.status, 403, JSON.stringify(body));
    assertLabelRefusal({ status: call.status, ...body.error }, /calling a tool in this session would reach/);
    // The operator's own call in the session is journaled and answered; the refused one left nothing.
    const mine = await operators.call("generic", "files_read", { path: "secret.md" }, "mine-1");
    assert.match(JSON.stringify(mine), /operator-owl/);
    const session = (await hostile.admin.runs.list({ labels: { team: "red" } })).find((run) => run.id.startsWith("ses_"));
    assert.doesNotMatch(JSON.stringify(await hostile.admin.runs.journal(session!.id)), /steal-1/);
    await assertOperatorDataKept("operator-owl");
    await hostile.assertStillServing();
  });

  it("a key limited to a namespace keeps its own workspace and memory, apart from the operator's", async () => {
    await output(hostile.attacker, { toolset: library, source: WRITE_SECRET, input: { word: "mallory-moth" } });
    assert.deepEqual(await output(hostile.attacker, { toolset: library, source: READ_SECRET }), {
      file: "mallory-moth",
      memory: "the secret word is mallory-moth",
    });
    await assertOperatorDataKept("operator-owl");
    await hostile.assertStillServing();
  });
  it("memory search scores are the namespace's own: alice's scores and order for a query are the same before and after mallory writes many notes with its words", async () => {
    const alice = hostile.admin.namespace("alice");
    // memory.write's own rate limit (20 a minute per end user, whatever the toolset) would stop mallory's flood first; this test comes last for the same reason.
    const notes = (await hostile.admin.toolsets.create({ library: { memory: {} }, policies: { "memory.write": { rateLimit: { perMinute: 1000 } } } })).id;
    await output(alice, {
      toolset: notes,
      source: `import { memory } from "tapedeck:tools";
        export default async () => {
          await memory.write({ path: "herons.md", content: "The grey heron waits by the river for fish." });
          await memory.write({ path: "river.md", content: "The river floods in spring; the heron nests upstream near the old mill." });
          await memory.write({ path: "garden.md", content: "Tomatoes and beans grow in the garden behind the house." });
          return "written";
        };`,
    });
    const SEARCH = `import { memory } from "tapedeck:tools"; export default async () => (await memory.search({ query: "heron river fish mill" })).results;`;
    const before = (await output(alice, { toolset: notes, source: SEARCH })) as { path: string; score: number }[];
    assert.deepEqual(
      before.map((hit) => hit.path),
      ["herons.md", "river.md"],
    );
    // Mallory writes notes full of the query's words: with one shared index, alice's scores moved with them (an oracle for mallory's words).
    await output(hostile.attacker, {
      toolset: notes,
      source: `import { memory } from "tapedeck:tools";
        export default async () => {
          for (let i = 0; i < 40; i++) await memory.write({ path: "m/" + i + ".md", content: i % 2 === 0 ? "heron heron heron river" : "fish mill fish mill " + "filler ".repeat(i) });
          return "written";
        };`,
    });
    assert.deepEqual(await output(alice, { toolset: notes, source: SEARCH }), before, "alice's hits, order and scores are unchanged");
    await hostile.assertStillServing();
  });
});
