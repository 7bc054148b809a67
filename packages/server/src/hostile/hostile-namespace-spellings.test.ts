import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { namespaceProblem } from "@tapedeck/protocol/api";
import { Tapedeck } from "@tapedeck/sdk";
import { cli } from "../cli/cli.js";
import { capture } from "../cli/test-support/in-process.js";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Namespace spellings (issue 23, item 3) against a real `tapedeck serve`: a second spelling of an
 * end user's id — a space at an end, a control or invisible character, a compatibility form — is
 * refused wherever a namespace enters (run starts, run lists, tokens, credentials, the namespace
 * header, direct sessions through it, `tapedeck keys create` and `credentials` flags, the SDK's
 * `namespace()` and options), each time saying what is wrong, so one end user has exactly one
 * name. Alice's memory is reached only by "alice"; the server keeps serving.
 */
let hostile: HostileServer;
let library: string;

/** Second spellings of "alice", each with what the refusal must say. */
const SPELLINGS: readonly (readonly [string, RegExp])[] = [
  ["alice ", /ends with a space \(U\+0020\)/],
  [" alice", /starts with a space \(U\+0020\)/],
  ["alice\t", /control character U\+0009/],
  ["alice\u00a0", /ends with a space \(U\+00A0\)/],
  ["ali\u200bce", /invisible or control character U\+200B at index 3/],
  ["alice\u200d", /invisible or control character U\+200D/],
  ["\u202ealice", /invisible or control character U\+202E at index 0/],
  ["alice\u2066", /U\+2066/],
  ["\ufeffalice", /U\+FEFF/],
  ["ali\u00adce", /U\+00AD/],
  ["alice\u0000", /U\+0000/],
  ["ali\u2028ce", /U\+2028/],
  ["ａｌｉｃｅ", /not in Unicode normal form \(NFKC\): it is spelled "alice" there/],
  ["ﬁona", /spelled "fiona" there/],
  ["ali\u0301ce".normalize("NFD"), /not in Unicode normal form/],
  ["a".repeat(257), /is 257 characters long; a namespace has at most 256/],
];

/** Spellings a header can carry as they are (Latin-1, no control character fetch refuses, no space HTTP trims). */
const HEADER_SPELLINGS = SPELLINGS.filter(([name]) => /^[\u0020-\u007e\u00a0-\u00ff]*$/.test(name) && !/^[ \t]|[ \t]$/.test(name));

const WRITE = `import { memory } from "tapedeck:tools";
export default async () => { await memory.write({ path: "diary.md", content: "alice's private diary" }); return "written"; };`;
const READ = `import { memory } from "tapedeck:tools";
export default async () => { try { return (await memory.read({ path: "diary.md" })).content; } catch (e) { return "none"; } };`;

before(async () => {
  hostile = await startHostileServer();
  library = (await hostile.admin.toolsets.create({ library: { memory: {} } })).id;
  const started = await hostile.admin.runs.start({ toolset: library, source: WRITE, namespace: "alice" });
  assert.equal(started.kind, "started");
  if (started.kind === "started") assert.equal((await hostile.admin.runs.get(started.run.id, { wait: 30 })).status, "completed");
});

after(async () => {
  await hostile.close();
});

async function send(
  method: string,
  path: string,
  options: { body?: unknown; namespace?: string } = {},
): Promise<{ status: number; code: string; message: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${hostile.server.adminKey!}` };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.namespace !== undefined) headers["tapedeck-namespace"] = options.namespace;
  const response = await fetch(`${hostile.server.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const body = (await response.json()) as { error?: { code: string; message: string } };
  return { status: response.status, code: body.error?.code ?? "", message: body.error?.message ?? JSON.stringify(body) };
}

function assertRefused(answer: { status: number; code: string; message: string }, where: string, says: RegExp): void {
  assert.deepEqual([answer.status, answer.code], [400, "invalid_request"], `${where}: ${answer.message}`);
  // The schema's own length limit answers an over-long field first, as for every string field.
  if (/257 characters/.test(says.source) && answer.message === `${where} must NOT have more than 256 characters.`) return;
  assert.match(answer.message, says, where);
  assert.match(answer.message, /An end user's id is compared exactly, so it must have only one spelling\.$/, where);
}

describe("namespace spellings (a real server)", () => {
  it("the rule: one spelling per end user, and ordinary ids of every script pass", () => {
    for (const name of ["alice", "user_42", "a/b", "Zoë", "山田太郎", "o'brien", "alice smith", "😀"]) assert.equal(namespaceProblem(name), undefined, name);
    for (const [name, says] of SPELLINGS) assert.match(namespaceProblem(name) ?? "accepted", says, JSON.stringify(name));
    assert.match(namespaceProblem("") ?? "accepted", /is empty/);
    assert.match(namespaceProblem("al\ud800ice") ?? "accepted", /lone UTF-16 surrogate/);
  });

  it("every API field that takes a namespace refuses a second spelling, saying what is wrong, and stores nothing", async () => {
    for (const [name, says] of SPELLINGS) {
      assertRefused(await send("POST", "/v1/runs", { body: { toolset: library, source: READ, namespace: name } }), "body.namespace", says);
      assertRefused(await send("POST", "/v1/tokens", { body: { namespace: name } }), "body.namespace", says);
      assertRefused(await send("GET", `/v1/runs?namespace=${encodeURIComponent(name)}`), "querystring.namespace", says);
      const credential = { name: "svc", kind: "bearer", value: "tok_x", hosts: ["api.example.com"], toolset: library, namespace: name };
      assertRefused(await send("POST", "/v1/credentials", { body: credential }), "body.namespace", says);
      assertRefused(await send("POST", "/v1/webhooks", { body: { url: "https://hooks.example.com/x", namespace: name } }), "body.namespace", says);
    }
    assert.deepEqual(await hostile.admin.webhooks.list(), [], "no webhook endpoint was made");
    assert.deepEqual(
      (await hostile.admin.runs.list()).filter((run) => run.namespace !== undefined && run.namespace !== "alice" && run.namespace !== "victim"),
      [],
      "no run was started under a second spelling",
    );
    await hostile.assertStillServing();
  });

  it("the namespace header refuses a second spelling, for runs and direct sessions alike; alice's memory is reached only as alice", async () => {
    assert.ok(HEADER_SPELLINGS.length >= 3, "some spellings travel in a header");
    for (const [name, says] of HEADER_SPELLINGS) {
      assertRefused(await send("POST", "/v1/runs", { body: { toolset: library, source: READ }, namespace: name }), "The tapedeck-namespace header", says);
      assertRefused(await send("POST", "/v1/sessions/diary/bind", { body: { toolset: library }, namespace: name }), "The tapedeck-namespace header", says);
    }
    const asAlice = await hostile.admin.namespace("alice").runs.start({ toolset: library, source: READ });
    const run = asAlice.kind === "started" ? await hostile.admin.runs.get(asAlice.run.id, { wait: 30 }) : assert.fail();
    assert.equal(run.output, "alice's private diary");
    await hostile.assertStillServing();
  });

  it("the SDK refuses a second spelling before sending (HTTP would trim the header's spaces into alice's name)", () => {
    for (const [name, says] of SPELLINGS) {
      assert.throws(
        () => hostile.admin.namespace(name),
        (error: unknown) => error instanceof TypeError && says.test(error.message),
        JSON.stringify(name),
      );
      assert.throws(
        () => new Tapedeck({ baseUrl: hostile.server.url, apiKey: hostile.server.adminKey!, namespace: name }),
        (error: unknown) => error instanceof TypeError && says.test(error.message),
        JSON.stringify(name),
      );
    }
  });

  it("tapedeck keys create and credentials refuse a second spelling in --namespace (exit 2, saying what is wrong), making no key", async () => {
    for (const [name, says] of SPELLINGS.slice(0, 6)) {
      const io = capture();
      assert.equal(await cli(["keys", "create", "--data", hostile.server.dataDir, "--namespace", name], io), 2, JSON.stringify(name));
      assert.deepEqual(io.out, [], "no key was printed");
      assert.match(io.err.join("\n"), says);
      const set = capture();
      assert.equal(await cli(["credentials", "delete", "svc", "--toolset", library, "--namespace", name, "--data", hostile.server.dataDir], set), 2);
      assert.match(set.err.join("\n"), says);
    }
    await hostile.assertStillServing();
  });
});
