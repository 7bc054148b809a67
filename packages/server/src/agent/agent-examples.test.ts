import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { TEST_ALLOW_LOOPBACK_ENV } from "../cli/commands/serve.js";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startModelFake, type FakeRequest, type ModelApi, type ModelTurn, type ToolResultSeen } from "../test-support/model-fakes/index.js";

/**
 * The examples in examples/agent, run as programs (tsx) against a real `tapedeck serve` and a
 * loopback fake of each model API that plays the model's turns written here; the official
 * client of each API talks to the fake. Each API goes through seed 001's loop twice: a correct
 * script; and a script with a type error, fixed, that then fails at run time after charging,
 * fixed with retry_run — which reuses the charge instead of making it again.
 */

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const TSX = `${REPO}node_modules/tsx/dist/cli.mjs`;

const EXAMPLES: Record<ModelApi, { readonly file: string; readonly args: readonly string[]; readonly env: (baseUrl: string) => Record<string, string> }> = {
  anthropic: { file: "examples/agent/anthropic.ts", args: [], env: (baseUrl) => ({ ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: "test-key" }) },
  "openai-responses": { file: "examples/agent/openai.ts", args: [], env: (baseUrl) => ({ OPENAI_BASE_URL: `${baseUrl}/v1`, OPENAI_API_KEY: "test-key" }) },
  "openai-chat": { file: "examples/agent/openai.ts", args: ["--chat"], env: (baseUrl) => ({ OPENAI_BASE_URL: `${baseUrl}/v1`, OPENAI_API_KEY: "test-key" }) },
};

let server: ServeChild;
let shop: Server;
let charges = 0;
const shopUrl = () => `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;

before(async () => {
  server = await startServeChild({ env: { [TEST_ALLOW_LOOPBACK_ENV]: "1" } });
  // What the scripts call: every POST /charge is a charge, counted.
  shop = createServer((request, response) => {
    if (request.method === "POST" && request.url === "/charge") charges++;
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ charged: true, amount: 42, id: `ch_${charges}` }));
  });
  await new Promise<void>((resolve) => shop.listen(0, "127.0.0.1", resolve));
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
  shop.closeAllConnections();
  await new Promise<void>((resolve) => shop.close(() => resolve()));
});

/** Runs an example program to its end; resolves with what it printed. */
async function runExample(api: ModelApi, baseUrl: string, question: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const example = EXAMPLES[api];
  const child = spawn(process.execPath, [TSX, example.file, ...example.args, question], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      ...example.env(baseUrl),
      TAPEDECK_URL: server.url,
      TAPEDECK_API_KEY: server.adminKey!,
      TAPEDECK_USER: `user-${api}`,
      TAPEDECK_HTTP_ALLOW: "127.0.0.1",
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

/** The result of the tool call the model made last, as the client sent it back. */
function lastResult(request: FakeRequest): ToolResultSeen {
  const result = request.toolResults.at(-1);
  assert.ok(result, `the client sent no tool result: ${JSON.stringify(request.body).slice(0, 500)}`);
  return result;
}

/** A tool result's error flag: Anthropic's is_error; the OpenAI APIs have none, so the text says it. */
function reportsError(api: ModelApi, result: ToolResultSeen): boolean {
  return api === "anthropic" ? result.isError === true : /failed|error/i.test(result.content);
}

const charge = () => `const response = await fetch("${shopUrl()}/charge", { method: "POST", body: { order: 7 } });\n  const receipt = await response.json();`;

for (const api of Object.keys(EXAMPLES) as ModelApi[]) {
  describe(`agent loop: ${api} (${EXAMPLES[api].file})`, () => {
    it("a correct script: run_script answers with its output, and the model answers the user", async () => {
      const before = charges;
      const fake = await startModelFake(api, [
        {
          toolCalls: [
            {
              name: "run_script",
              input: { code: `export default async () => {\n  ${charge()}\n  console.log("charged", receipt.id);\n  return { amount: receipt.amount };\n};` },
            },
          ],
        },
        (request): ModelTurn => {
          const result = lastResult(request);
          assert.equal(result.isError, undefined, result.content);
          assert.match(result.content, /completed/i);
          assert.match(result.content, /"amount": 42/);
          assert.match(result.content, /charged ch_\d+/, "the last log lines");
          return { text: "The order was charged 42." };
        },
      ]);
      try {
        const { code, stdout, stderr } = await runExample(api, fake.baseUrl, "Charge order 7.");
        assert.equal(code, 0, stderr);
        assert.equal(stdout.trim(), "The order was charged 42.");
        await fake.done;
        assert.deepEqual(fake.errors, []);
        assert.equal(charges, before + 1);
      } finally {
        await fake.close();
      }
    });

    it("a type error, fixed; then a failure at run time, fixed with retry_run without charging again", async () => {
      const before = charges;
      let failedRun = "";
      const fake = await startModelFake(api, [
        { toolCalls: [{ name: "run_script", input: { code: `export default async () => {\n  const total: number = "forty-two";\n  return total;\n};` } }] },
        (request): ModelTurn => {
          const result = lastResult(request);
          assert.ok(reportsError(api, result), result.content);
          assert.match(result.content, /not assignable to type 'number'/);
          assert.match(result.content, /const total: number = "forty-two"/, "the code frame");
          assert.equal(charges, before, "a refused script runs nothing");
          return {
            toolCalls: [{ name: "run_script", input: { code: `export default async () => {\n  ${charge()}\n  return receipt.total.toFixed(2);\n};` } }],
          };
        },
        (request): ModelTurn => {
          const result = lastResult(request);
          assert.ok(reportsError(api, result), result.content);
          assert.match(result.content, /Cannot read properties of undefined|undefined/);
          assert.match(result.content, /receipt\.total\.toFixed/, "the failing line's code frame");
          failedRun = /\b(run_[A-Za-z0-9_-]+)/.exec(result.content)?.[1] ?? "";
          assert.notEqual(failedRun, "", `the text names the run: ${result.content}`);
          assert.equal(charges, before + 1);
          return {
            toolCalls: [
              { name: "retry_run", input: { run_id: failedRun, code: `export default async () => {\n  ${charge()}\n  return receipt.amount.toFixed(2);\n};` } },
            ],
          };
        },
        (request): ModelTurn => {
          const result = lastResult(request);
          assert.equal(result.isError, undefined, result.content);
          assert.match(result.content, /"42\.00"/);
          return { text: "Charged 42.00." };
        },
      ]);
      try {
        const { code, stdout, stderr } = await runExample(api, fake.baseUrl, "Charge order 7 and tell me the total.");
        assert.equal(code, 0, stderr);
        assert.equal(stdout.trim(), "Charged 42.00.");
        await fake.done;
        assert.deepEqual(fake.errors, []);
        assert.equal(charges, before + 1, "retry_run reused the charge the failed run made");
      } finally {
        await fake.close();
      }
    });
  });
}
