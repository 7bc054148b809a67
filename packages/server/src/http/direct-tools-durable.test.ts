import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { gatewayRules, type Tapedeck } from "@tapedeck/sdk";
import { failure } from "./test-support/failure.js";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Direct tool mode's durability and rules, through the SDK against a real `tapedeck serve` over
 * the MCP fixture server: an approval that survives a restart and is decided from the CLI while
 * the server holds the session; a pending call decided under another tool table (config_mismatch,
 * or the drift note); spilled results read back page by page; business errors; and seed 002's
 * gateway recipe with its negative case.
 */
const FIXTURE = fileURLToPath(new URL("../../../engine/dist-test/test-support/mcp/stdio-main.js", import.meta.url));
const CLI = fileURLToPath(new URL("../cli/main.js", import.meta.url));
const TOOLSET = { mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } };

let server: ServeChild;
let adminKey: string;
let toolset: string;

before(async () => {
  server = await startServeChild();
  adminKey = server.adminKey!;
  toolset = (await server.client(server.adminKey!).toolsets.create(TOOLSET)).id;
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** `promise`, or a failure naming what was waited for once `ms` have passed. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function td(): Tapedeck {
  return server.client(adminKey, "carol");
}

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args, "--data", server.dataDir], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

describe("direct tool sessions are durable", () => {
  it("keeps a pending approval across a restart; the CLI lists it with its summary and approves it while the server holds the session; the call is sent once", async () => {
    const options = { toolset, session: "restart", approval: { ask: [{ tool: "fx.effects", summary: "effect {/op}" }] } } as const;
    const before = await td().directTools(options);
    const first = await before.call("anthropic", "fx_effects", { op: "ship" }, "toolu_ship");
    assert.equal(first.status, "pending");
    // The server logs the call that waits for a human, as it does for a run's.
    const logged = await within(
      30_000,
      "log line of the session's call waiting for a decision",
      server.stderrLine((line) => line.includes("call waits for a decision") && line.includes(before.sessionId)),
    );
    assert.match(logged, /fx\.effects/);

    await server.stop();
    server = await startServeChild({ dataDir: server.dataDir });
    const tools = await td().directTools(options);
    assert.equal(tools.binding, before.binding, "the same options bind the same table");
    assert.equal(tools.note, undefined, "the tools did not change");
    // Handled again after the restart: still pending (the server now holds the session).
    const again = await tools.call("anthropic", "fx_effects", { op: "ship" }, "toolu_ship");
    assert.equal(again.status, "pending");

    const listed = await cli("approvals");
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${tools.sessionId}/1  fx\\.effects\\(\\{"op":"ship"\\}\\)  session "restart": effect ship \\(expires `, "m"));
    const approved = await cli("approve", `${tools.sessionId}/1`, "--reason", "from the CLI");
    assert.equal(approved.code, 0, approved.stderr);

    const result = await tools.anthropic.handle({ id: "toolu_ship", name: "fx_effects", input: { op: "ship" } });
    assert.equal(result.is_error, undefined, JSON.stringify(result));
    const effect = JSON.parse(textOf(result.content)) as { key: string; attemptsForKey: number };
    assert.deepEqual([effect.key, effect.attemptsForKey], [`${tools.sessionId}/1`, 1]);
  });

  it("refuses to decide or answer a pending call under another tool table (config_mismatch), unless drift is allowed, which names what changed", async () => {
    const asked = await td().directTools({ toolset, session: "drift", approval: { ask: ["fx.effects"] } });
    assert.equal((await asked.call("generic", "fx_effects", { op: "move" }, "c1")).status, "pending");
    const narrower = { toolset, session: "drift", tools: ["fx.effects", "fx.echo"], approval: { ask: ["fx.effects"] } } as const;
    const changed = await td().directTools(narrower);
    assert.match(changed.note ?? "", /^Your tools changed since the previous turn of this session\.\nRemoved: .*fx_echo_plain.*\. Calling them now fails/m);
    const refused = await failure(changed.approve(1));
    assert.equal(refused.code, "config_mismatch");
    assert.match(refused.message, /Nothing was written/);
    const answered = await failure(changed.call("generic", "fx_effects", { op: "move" }, "c1"));
    assert.equal(answered.code, "config_mismatch");
    assert.equal((await changed.pending()).length, 1, "nothing was written");

    const drifting = await td().directTools({ ...narrower, allowConfigDrift: true });
    const decided = await drifting.approve(1);
    assert.equal(decided.decision, "approved");
    assert.match(decided.note ?? "", /Removed: .*fx_echo_plain/);
    const result = await drifting.handle("fx_effects", { op: "move" }, { toolCallId: "c1" });
    assert.equal(result.isError, false, result.text);
  });

  it("spills a result over its budget to a blob that fetch_blob reads back exactly, page by page within the budget, in this session only", async () => {
    // Multi-byte and astral characters over several 48 KiB pages: the pages must split nothing and lose nothing.
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} ${"é😀x".repeat(20)}`);
    const whole = lines.join("\n");
    const maxTokens = 2000;
    const tools = await td().directTools({ toolset, session: "spill", results: { maxTokens }, approval: { allow: ["fx.echo_plain"] } });
    const big = await tools.handle("fx_echo_plain", { text: whole }, { toolCallId: "big" });
    assert.equal(big.isError, false);
    assert.match(big.text, /too large to show whole \(2,000 lines/);
    assert.match(big.text, /^First 20 lines:$/m);
    const handle = /(blob_[0-9a-f]{40})/.exec(big.text)?.[1];
    assert.ok(handle, big.text);
    let text = "";
    let pages = 0;
    for (let offset: number | undefined = 0; offset !== undefined; pages++) {
      const page = await tools.handle("fetch_blob", { handle, offset }, { toolCallId: `page-${pages}` });
      assert.equal(page.isError, false, page.text);
      // Each page is a result within the session's budget (tokens estimated as UTF-8 bytes / 3.5), not a fixed 48 KiB.
      assert.ok(Buffer.byteLength(page.text) / 3.5 <= maxTokens, `page ${pages}: ${Buffer.byteLength(page.text)} bytes for a budget of ${maxTokens} tokens`);
      const [header, ...rest] = page.text.split("\n");
      text += rest.join("\n");
      offset = /"offset": (\d+) \}\)\):$/.test(header!) ? Number(/"offset": (\d+) \}\)\):$/.exec(header!)![1]) : undefined;
    }
    assert.ok(pages >= 3, `${pages} pages`);
    assert.equal(text, whole);
    // The harness reads the same blob over the API, from any offset.
    let read = "";
    for (let offset: number | undefined = 7; offset !== undefined;) {
      const page = await tools.blob(handle, offset);
      assert.deepEqual([page.offset, page.total], [offset, whole.length]);
      read += page.text;
      offset = page.nextOffset;
    }
    assert.equal(read, whole.slice(7));
    const other = await td().directTools({ toolset, session: "spill-2" });
    const stolen = await other.handle("fetch_blob", { handle, offset: 0 }, { toolCallId: "steal" });
    assert.equal(stolen.isError, true);
    assert.match(stolen.text, /There is no blob_[0-9a-f]{40} in this session/);
    assert.equal((await failure(other.blob(handle))).status, 404);
  });

  it("turns a business error in a successful result into an error result that keeps the original text", async () => {
    const tools = await td().directTools({
      toolset,
      session: "envelope",
      errorEnvelope: { code: "/code", message: "/message" },
      approval: { allow: ["fx.echo_plain"] },
    });
    const body = JSON.stringify({ code: 40001, message: "budget too low" });
    const result = await tools.handle("fx_echo_plain", { text: body }, { toolCallId: "e1" });
    assert.equal(result.isError, true);
    assert.equal(result.text, `${body}\nUpstream error 40001: budget too low`);
    const fine = await tools.handle("fx_echo_plain", { text: JSON.stringify({ code: 0, message: "ok" }) }, { toolCallId: "e2" });
    assert.equal(fine.isError, false);
  });

  it("seed 002's gateway recipe: a name-only rule lets a delete through; the argument rule asks for it, with the operation as its summary, and lets reads through", async () => {
    // The fixture's echo_plain stands for the gateway's tool_execute: its argument names the operation.
    const wrong = await td().directTools({ toolset, session: "gateway-wrong", approval: { deny: ["*_delete"], allow: ["*"] } });
    const slipped = await wrong.call("generic", "fx_echo_plain", { text: "campaign_delete" }, "w1");
    assert.equal(slipped.status, "done", "the name-only rule never matches: the delete was sent");

    const rules = gatewayRules({
      tool: "fx.echo_plain",
      operation: "/text",
      writes: /_(create|update|delete|upload)$/,
      reads: /_(get|list|search)$/,
      summary: "TikTok {/text}",
    });
    const right = await td().directTools({ toolset, session: "gateway-right", approval: { ...rules, unmatched: "byRisk" } });
    const read = await right.call("generic", "fx_echo_plain", { text: "campaign_get" }, "r1");
    assert.equal(read.status, "done");
    const write = await right.call("generic", "fx_echo_plain", { text: "campaign_delete" }, "r2");
    assert.equal(write.status, "pending");
    assert.equal(write.status === "pending" ? write.approval.summary : "", "TikTok campaign_delete");
    assert.equal(write.status === "pending" ? write.approval.ruleId : "", "gateway.writes");
  });
});

/** A tool result's content as text: the string, or its text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  assert.ok(Array.isArray(content), `a tool result's content is a string or blocks, not ${JSON.stringify(content)}`);
  return (content as { type: string; text?: string }[]).map((block) => (block.type === "text" ? (block.text ?? "") : `[${block.type}]`)).join("\n");
}
