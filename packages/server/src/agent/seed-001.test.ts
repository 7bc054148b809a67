import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import type { PendingApproval } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startModelFake, type FakeRequest, type ModelApi, type ModelTurn } from "../test-support/model-fakes/index.js";

/**
 * Seed 001's code samples, as the seed writes them (examples/seed-001: the seed's code between
 * marks, the harness around it), run as programs (tsx) against a real `tapedeck serve` and a
 * loopback fake of each model API driven by the official clients: `new Rewind()` from the
 * environment, the Anthropic beta loop with its fallbacks, the Responses and Chat Completions
 * loops, and "any other API" with `result.content` and `approvals.pending(result.run)`.
 * `npm run check` type-checks the same files against the official clients' types.
 */

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const TSX = `${REPO}node_modules/tsx/dist/cli.mjs`;

let server: ServeChild;

before(async () => {
  server = await startServeChild();
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** Runs a sample to its end with the client settings in the environment only (the seed's `new Rewind()` takes no options). */
async function runSample(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [TSX, `examples/seed-001/${file}`, ...args], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env, TAPEDECK_URL: server.url, TAPEDECK_API_KEY: server.adminKey!, TAPEDECK_USER: `seed-user-${file}` },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

const SCRIPT = "export default async () => [1, 2, 3].map((n) => n * 14).reduce((a, b) => a + b, 0);";

/** The model's second turn: the run_script result it read, checked; the run is never in what the client sent. */
function answerAfterRun(request: FakeRequest): ModelTurn {
  const result = request.toolResults.at(-1);
  assert.ok(result, `no tool result in ${JSON.stringify(request.body).slice(0, 300)}`);
  assert.match(result.content, /^Run run_\S+ completed\. Output \(JSON\):\n84/);
  assert.doesNotMatch(JSON.stringify(request.body), /"run":\{/, "result.run is for the harness: it is not sent to the model API");
  return { text: "The answer is 84." };
}

const MODEL_ENV: Record<"anthropic" | "openai", (baseUrl: string) => Record<string, string>> = {
  anthropic: (baseUrl) => ({ ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: "test-key" }),
  openai: (baseUrl) => ({ OPENAI_BASE_URL: `${baseUrl}/v1`, OPENAI_API_KEY: "test-key" }),
};

const LOOPS: readonly {
  readonly api: ModelApi;
  readonly file: string;
  readonly env: (baseUrl: string) => Record<string, string>;
  readonly first: (request: FakeRequest) => void;
}[] = [
  {
    api: "anthropic",
    file: "anthropic.ts",
    env: MODEL_ENV.anthropic,
    first: (request) => {
      assert.match(String(request.headers["anthropic-beta"]), /server-side-fallback-2026-07-01/);
      assert.deepEqual([request.body.model, request.body.fallbacks, request.body.output_config], ["claude-opus-5-5", "default", { effort: "high" }]);
      assert.match(String(request.body.system), /What scripts can use:\nfetch\(url/);
    },
  },
  {
    api: "openai-responses",
    file: "openai-responses.ts",
    env: MODEL_ENV.openai,
    first: (request) => assert.match(String(request.body.instructions), /What scripts can use:\nfetch\(url/),
  },
  {
    api: "openai-chat",
    file: "openai-chat.ts",
    env: MODEL_ENV.openai,
    first: (request) => assert.match(JSON.stringify(request.body.messages), /What scripts can use:\\nfetch\(url/),
  },
];

describe("seed 001's samples, run as written", () => {
  for (const loop of LOOPS) {
    it(`${loop.api} (${loop.file}): the model's run_script runs, its output comes back as the tool result, and the answer is printed`, async () => {
      const fake = await startModelFake(loop.api, [
        (request): ModelTurn => {
          loop.first(request);
          return { toolCalls: [{ name: "run_script", input: { code: SCRIPT } }] };
        },
        answerAfterRun,
      ]);
      try {
        const { code, stdout, stderr } = await runSample(loop.file, ["What is 14 + 28 + 42?"], loop.env(fake.baseUrl));
        assert.equal(code, 0, stderr);
        assert.equal(stdout.trim(), "The answer is 84.");
        await fake.done;
        assert.deepEqual(fake.errors, []);
      } finally {
        await fake.close();
      }
    });
  }

  it("any other API (any-api.ts): definitions, handle(name, input, { toolCallId }) gives result.content; approvals.pending(result.run) lists the call that waits", async () => {
    const code = `import { shop } from "tapedeck:tools";\nexport default async () => shop.refund({ order: "o_7" });`;
    const { code: exit, stdout, stderr } = await runSample("any-api.ts", ["run_script", JSON.stringify({ code, wait: 10 }), "call_seed_1"]);
    assert.equal(exit, 0, stderr);
    const answer = JSON.parse(stdout) as { tools: string[]; content: string; isError: boolean; run: string; pending: PendingApproval[] };
    assert.deepEqual(answer.tools, [
      "run_script",
      "check_script",
      "test_script",
      "get_run",
      "list_runs",
      "signal_run",
      "cancel_run",
      "retry_run",
      "search_tools",
      "save_workflow",
    ]);
    assert.equal(answer.isError, false, answer.content);
    assert.match(answer.content, /call #1: shop\.refund\(\{"order":"o_7"\}\) waits for approval/);
    assert.deepEqual(
      answer.pending.map((p) => [p.runId, p.seq, p.tool, p.args]),
      [[answer.run, 1, "shop.refund", { order: "o_7" }]],
    );
    await server.client(server.adminKey!).runs.cancel(answer.run);
  });
});
