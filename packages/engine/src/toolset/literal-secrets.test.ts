import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { EngineError } from "../errors.js";
import { testEngine } from "../test-support/engines.js";
import { storedToolsets } from "../test-support/stored-toolsets.js";
import { findLiteralSecret, literalSecretIn } from "./literal-secrets.js";

/**
 * A toolset is readable by anyone who knows its id, so registration refuses one that holds a
 * literal secret anywhere it stores a value, judged by the value's shape (not only by the key
 * that holds it). Through `Engine.registerToolset` and `saveWorkflow`, on real SQLite.
 */
let t: Awaited<ReturnType<typeof testEngine>>;

before(async () => {
  t = await testEngine({ hostTools: { probe: { echo: (args: unknown) => Promise.resolve(args) } } });
});

after(async () => {
  await t.cleanup();
});

const PASSWORD = "hunter2-Secret";
const GITHUB = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
const SLACK = "xoxb-2048-4096-abcdefABCDEF";
const ANTHROPIC = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";

async function refused(spec: unknown): Promise<EngineError> {
  const before = storedToolsets(t.dataDir);
  const error = await t.engine.registerToolset(spec).then(
    () => assert.fail(`registered: ${JSON.stringify(spec)}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof EngineError && error.code === "invalid_toolset", String(error));
  assert.equal(storedToolsets(t.dataDir), before, "nothing was stored");
  for (const secret of [PASSWORD, GITHUB, SLACK, ANTHROPIC]) assert.ok(!error.message.includes(secret), `the message quotes the secret: ${error.message}`);
  return error;
}

describe("literal secrets in a toolset", () => {
  it("a stdio server's env holding a connection string with a password is refused before anything runs", async () => {
    const marker = join(t.dataDir, "server-ran");
    const error = await refused({
      mcpServers: {
        pg: {
          command: process.execPath,
          args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran")`],
          env: { POSTGRES_CONNECTION_STRING: `postgresql://admin:${PASSWORD}@db.example.com:5432/app` },
        },
      },
    });
    assert.match(error.message, /^mcpServers\.pg\.env\.POSTGRES_CONNECTION_STRING holds what looks like a secret \(a password in a URL's user info\)/);
    assert.match(error.message, /anyone who knows its id can read it/);
    assert.match(error.message, /\$\{DATABASE_URL\}/, "it says to use a reference to the environment");
    assert.match(error.message, /vault credential/);
    assert.equal(existsSync(marker), false, "the server was not started");
  });

  it("every field that is stored is checked, and the message names it and says what to do instead", async () => {
    const cases: [unknown, RegExp][] = [
      [
        { mcpServers: { gh: { url: "https://mcp.example.com/mcp", headers: { "X-Custom": GITHUB } } } },
        /^mcpServers\.gh\.headers\["X-Custom"\] holds what looks like a secret \(a github token\).*"credential": "NAME"/,
      ],
      [{ mcpServers: { gh: { url: `https://bot:${PASSWORD}@mcp.example.com/mcp` } } }, /^mcpServers\.gh\.url holds .*user info.*Keep the URL free of it/],
      [{ mcpServers: { gh: { url: "https://mcp.example.com/mcp?api_key=abc123def456" } } }, /^mcpServers\.gh\.url holds .*query parameter "api_key"/],
      [
        { mcpServers: { db: { command: "psql-mcp", args: ["--url", `postgres://me:${PASSWORD}@db/x`] } } },
        /^mcpServers\.db\.args\[1\] holds .*Command lines are stored as written and never expanded: put the secret in "env"/,
      ],
      [{ mcpServers: { db: { command: `env SLACK=${SLACK} slack-mcp` } } }, /^mcpServers\.db\.command holds .*\(a slack token\)/],
      [
        { hostTools: { crm: { lookup: { description: `Calls the CRM with ${ANTHROPIC}.` } } } },
        /^hostTools\.crm\.lookup\.description holds .*\(an anthropic api key\).*shown to everyone who uses it/,
      ],
      [
        { hostTools: { crm: { lookup: { inputSchema: { type: "object", properties: { token: { type: "string", default: SLACK } } } } } } },
        /^hostTools\.crm\.lookup\.inputSchema\.properties\.token\.default holds/,
      ],
      [
        { hostTools: { crm: { lookup: { outputSchema: { type: "object", examples: [{ key: GITHUB }] } } } } },
        /^hostTools\.crm\.lookup\.outputSchema\.examples\[0\]\.key holds/,
      ],
      [
        { hostTools: { crm: { lookup: { inputSchema: { type: "object", properties: { [GITHUB]: {} } } } } } },
        /^hostTools\.crm\.lookup\.inputSchema\.properties has a key that looks like a secret/,
      ],
    ];
    for (const [spec, expected] of cases) assert.match((await refused(spec)).message, expected);
  });

  it("references to the environment, vault credential names and URLs without secrets register", async () => {
    process.env.TAPEDECK_TEST_PG_PASSWORD = PASSWORD;
    const spec = {
      hostTools: {
        crm: {
          lookup: {
            description: "Looks a customer up at https://crm.example.com/api/customers?id=42&sort=name; send Authorization: Bearer ${TOKEN} (a reference).",
            inputSchema: { type: "object", properties: { url: { type: "string", default: "postgresql://admin:${TAPEDECK_TEST_PG_PASSWORD}@db/app" } } },
          },
        },
      },
    };
    const registered = await t.engine.registerToolset(spec);
    assert.equal((await t.engine.toolset(registered.id)).id, registered.id);
    assert.doesNotMatch(JSON.stringify(registered.toolset), new RegExp(PASSWORD), "the reference is stored, not its value");
    delete process.env.TAPEDECK_TEST_PG_PASSWORD;
  });

  it("a saved workflow's code or schemas holding a secret is refused, and nothing is saved", async () => {
    const base = await t.engine.registerToolset({ hostTools: { probe: { echo: {} } } });
    const before = storedToolsets(t.dataDir);
    const save = (source: string, input: unknown = { type: "null" }) =>
      t.engine.saveWorkflow({ toolset: base.id, name: "report", description: "Reports.", source, input: input as never, output: { type: "null" } });
    const code = await save(`export default async (input: null) => { const key = "${GITHUB}"; return input; };`).then(
      () => assert.fail("saved"),
      (e: unknown) => e as EngineError,
    );
    assert.equal(code.code, "invalid_request");
    assert.match(code.message, /^Workflow report: its code holds what looks like a secret \(a github token\)\..*nothing was saved.*credential: "NAME"/);
    const schema = await save("export default async (input: null) => input;", { type: "null", description: `pass ${SLACK}` }).then(
      () => assert.fail("saved"),
      (e: unknown) => e as EngineError,
    );
    assert.match(schema.message, /^Workflow report: its input\.description holds what looks like a secret \(a slack token\)/);
    for (const error of [code, schema]) assert.ok(!error.message.includes(GITHUB) && !error.message.includes(SLACK));
    assert.equal(storedToolsets(t.dataDir), before);
    assert.equal((await save("export default async (input: null) => input;")).kind, "saved");
  });

  it("finds a secret wherever it is put in any JSON, and names where without quoting it (property)", () => {
    const shapes = fc.constantFrom(GITHUB, SLACK, ANTHROPIC, `mysql://root:${PASSWORD}@10.0.0.1/db`, `https://h.example.com/x?access_token=${PASSWORD}`);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), shapes, fc.nat(), fc.string(), fc.string(), (json, secret, pick, prefix, suffix) => {
        // The secret, set off by a space on each side, inside one string of the value.
        const text = `${prefix} ${secret} ${suffix}`;
        const holder = { data: json, at: [{ deep: { text } }] };
        const found = findLiteralSecret(pick % 2 === 0 ? holder : { ...holder, at: text }, "");
        assert.ok(found !== undefined);
        assert.ok(!found.path.includes(secret));
      }),
      { numRuns: 300 },
    );
  });

  it("ordinary text has no secret", () => {
    for (const text of [
      "",
      "postgresql://db.example.com/app",
      "postgresql://admin@db/app",
      "https://api.example.com/?q=tokens&page=2",
      "sk-learn-models",
      "Bearer ${GITHUB_TOKEN}",
      "postgres://u:${PW}@h/d",
      "https://h/?token=${T}",
      "://://::@@",
      "a://b:@c",
    ]) {
      assert.equal(literalSecretIn(text), undefined, text);
    }
  });
});
