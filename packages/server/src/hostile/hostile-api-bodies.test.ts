import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/**
 * Hostile API bodies through a real `tapedeck serve`, on every route that takes one: nested far
 * too deep, nested as deep as allowed, lone UTF-16 surrogates in strings and in keys, scripts
 * too large, and a large script whose check is slow. No answer is a 5xx, every refusal says what
 * was wrong, the server keeps serving the other tenant (also after a restart), and a slow check
 * never holds the server's event loop.
 */
let hostile: HostileServer;
/** A run of the attacker's waiting for signal "go", with call #1 waiting for approval. */
let waiting: string;

before(async () => {
  hostile = await startHostileServer();
  const approving = (
    await hostile.admin.toolsets.create({ hostTools: { probe: { echo: { description: "Echo." } } }, policies: { "probe.echo": { approval: true } } })
  ).id;
  const started = await hostile.attacker.runs.start({
    toolset: approving,
    source: `import { probe } from "tapedeck:tools";\nexport default async () => { void probe.echo({}); return signal("go"); };`,
  });
  if (started.kind !== "started") throw new Error("refused");
  waiting = started.run.id;
  assert.equal((await hostile.attacker.runs.get(waiting, { wait: 30 })).status, "waiting");
});

after(async () => {
  await hostile.close();
});

/** Where `@V@` is in a template, a JSON value goes; where `@S@` is, a string's contents. */
type Template = readonly [path: string, body: string];

function templates(): Template[] {
  const ts = hostile.toolset;
  const run = waiting;
  return [
    ["/v1/toolsets", `{"hostTools":{"probe":{"echo":{"description":"a@S@","inputSchema":{"type":"object","default":@V@}}}}}`],
    ["/v1/check", `{"toolset":"${ts}","source":"export default '@S@';"}`],
    [
      "/v1/test",
      `{"toolset":"${ts}","source":"import { probe } from 'tapedeck:tools';\\nexport default () => probe.echo({});","scenario":{"tools":{"probe.echo":{"result":@V@}},"signals":[{"name":"@S@","payload":1}]}}`,
    ],
    ["/v1/runs", `{"toolset":"${ts}","source":"export default (i: unknown) => i;","input":@V@,"labels":{"k":"@S@"}}`],
    [`/v1/runs/${run}/signal`, `{"name":"other@S@","payload":@V@}`],
    [`/v1/runs/${run}/fork`, `{"source":"export default (i: unknown) => i;","input":@V@}`],
    [`/v1/runs/${run}/calls/1/reject`, `{"reason":"@S@"}`],
    [`/v1/runs/${run}/calls/1/approve`, `{"reason":"@S@"}`],
    ["/v1/tokens", `{"namespace":"mallory","labels":{"k":"@S@"}}`],
    ["/v1/tasks/poll", `{"tools":["probe.echo@S@"],"waitMs":1}`],
    ["/v1/tasks/task_x/heartbeat", `{"lease":"@S@"}`],
    ["/v1/tasks/task_x/complete", `{"lease":"l@S@","result":@V@}`],
    ["/v1/tasks/task_x/fail", `{"lease":"l","error":{"code":"c@S@","message":"m","details":@V@}}`],
    ["/v1/webhooks", `{"url":"https://example.com/@S@","events":["run.ended"]}`],
    ["/v1/credentials", `{"toolset":"${ts}","name":"N@S@","kind":"bearer","secret":{"token":"@S@"}}`],
    [
      `/v1/toolsets/${ts}/workflows`,
      `{"name":"w","description":"@S@","source":"export default (i: unknown) => i;","input":{"type":"object","default":@V@},"output":{}}`,
    ],
    [`/v1/runs/${run}/cancel`, `{"reason":"@S@"}`],
  ];
}

function nested(depth: number): string {
  return `${"[".repeat(depth)}"leaf"${"]".repeat(depth)}`;
}

function fill(template: string, value: string, text: string): string {
  return template.replaceAll("@V@", value).replaceAll("@S@", text);
}

async function send(path: string, body: string, key = hostile.attackerKey): Promise<{ status: number; text: string }> {
  const response = await fetch(new URL(path, hostile.server.url), {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  return { status: response.status, text: await response.text() };
}

describe("hostile API bodies", () => {
  it("lone surrogates in strings and keys, and bodies nested far too deep, are a 400 that says so on every route", async () => {
    // Each makes one part of the body bad: its text (`@S@`) or its value (`@V@`).
    const bad = [
      { in: "@S@", value: "1", text: "lone \\ud800 high", message: /lone UTF-16 surrogate/ },
      { in: "@V@", value: '{"\\udfff":1}', text: "x", message: /lone UTF-16 surrogate/ },
      { in: "@V@", value: nested(100_000), text: "x", message: /more than 256 levels deep/ },
    ];
    for (const [path, template] of templates()) {
      for (const { in: part, value, text, message } of bad) {
        if (!template.includes(part)) continue;
        const body = fill(template, value, text);
        const answer = await send(path, body);
        assert.equal(answer.status, 400, `${path}: ${answer.text.slice(0, 200)}`);
        assert.match(answer.text, message, path);
      }
    }
    await hostile.assertStillServing();
  });

  it("bodies as deep as allowed, with well-formed Unicode, get an answer that is not a 5xx on every route", async () => {
    for (const [path, template] of templates()) {
      for (const key of [hostile.attackerKey, hostile.server.adminKey!]) {
        const answer = await send(path, fill(template, nested(240), "emoji \\ud83d\\ude00"), key);
        assert.ok(answer.status < 500, `${path}: ${answer.status} ${answer.text.slice(0, 300)}\n${hostile.server.stderr().slice(-2000)}`);
      }
    }
    await hostile.assertStillServing();
    await hostile.restart();
    await hostile.assertStillServing();
  });

  it("a script past 256 KiB is refused unchecked, with a diagnostic that says what to do", async () => {
    const source = `export default () => ${JSON.stringify("x".repeat(300 * 1024))};`;
    for (const path of ["/v1/runs", "/v1/check"]) {
      const answer = await send(path, JSON.stringify({ toolset: hostile.toolset, source }));
      const text = answer.text;
      assert.ok(answer.status === 422 || answer.status === 200, `${path}: ${answer.status} ${text.slice(0, 200)}`);
      assert.match(text, /"code":"script-too-large"/);
      assert.match(text, /The script is 301 KiB; a script may be at most 256 KiB of source/);
    }
    await hostile.assertStillServing();
  });

  it("a slow check runs off the server's event loop: /health, asked once the check is sent, answers first", async () => {
    // Under 1 KiB, so the server has the whole request at once, and seconds to check: relating
    // unions of 10,000 object types, each to the next.
    const digits = `type D = "0"|"1"|"2"|"3"|"4"|"5"|"6"|"7"|"8"|"9";\ntype N = \`\${D}\${D}\${D}\${D}\`;\ntype O = { [K in N]: { kind: K; v: \`x\${K}\` } }[N];\n`;
    const relations = Array.from(
      { length: 6 },
      (_, i) => `type P${i} = { [K in N]: { kind: K; v: string; w${i}?: K } }[N];\nconst f${i} = (o: O): P${i} => o;\n`,
    ).join("");
    const source = `${digits}${relations}export default () => [f0, f1, f2, f3, f4, f5].length;\n`;
    const order: string[] = [];
    const checked = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify({ toolset: hostile.toolset, source });
      const sent = request(
        new URL("/v1/check", hostile.server.url),
        {
          method: "POST",
          headers: { authorization: `Bearer ${hostile.attackerKey}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk.toString()));
          response.on("end", () => {
            order.push("check");
            resolve({ status: response.statusCode ?? 0, body: text });
          });
        },
      );
      sent.on("error", reject);
      // Once the whole body is written, the server has the check to do before anything sent later.
      sent.on("finish", () => {
        fetch(new URL("/health", hostile.server.url)).then(
          (health) => order.push(`health ${health.status}`),
          (error: unknown) => order.push(`health failed: ${String(error)}`),
        );
      });
      sent.end(body);
    });
    const result = await checked;
    assert.equal(result.status, 200, result.body.slice(0, 300));
    assert.match(result.body, /"ok":true/);
    assert.deepEqual(order, ["health 200", "check"]);
  });
});
