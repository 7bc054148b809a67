import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import type { DirectTools, Tapedeck } from "@tapedeck/sdk";
import { startModelFake } from "../test-support/model-fakes/index.js";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * Seed 002's second recipe, "read-only tools made lazy", as our options say it, through the SDK
 * against a real `tapedeck serve`, driven by the official Anthropic client against a loopback
 * fake: a flat API (the MCP fixture with reads annotated `readOnlyHint` and unannotated writes),
 * `lazy: { lowering: "menu", readOnly: true }` and an `errorEnvelope`. The reads are on the menu
 * only and load through `tool_find`; the writes are sent eagerly (our options choose lazy tools by
 * annotation, and exclude tools only by name glob), and `byRisk` asks a human for them; a business
 * error in a successful result becomes `isError` with "Upstream error <code>: <message>".
 *
 * The seed's wrong-order case (lazy loading registered before the source it summarizes, whose
 * tools are then sent in full) cannot arise: lazy options apply to the whole tool table when it is
 * bound. Its equivalent is the order of the toolset's servers, which must not change the menu.
 */
const FIXTURE = fileURLToPath(new URL("../../../engine/dist-test/test-support/mcp/stdio-main.js", import.meta.url));
const TIKTOK = { command: process.execPath, args: [FIXTURE, "--read-only-names", "campaign_get,report_search", "--names", "campaign_create,ad_delete"] };
const FX = { command: process.execPath, args: [FIXTURE] };
const OPTIONS = { lazy: { lowering: "menu", readOnly: true }, errorEnvelope: { code: "/code", message: "/message" } } as const;
/** Every tool of the two servers annotated read-only: the fixture's echo and effects_log, and tiktok's reads. */
const READS = ["fx_echo", "fx_effects_log", "tiktok_campaign_get", "tiktok_echo", "tiktok_effects_log", "tiktok_report_search"];

let server: ServeChild;
let admin: Tapedeck;
let td: Tapedeck;

before(async () => {
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  td = admin.namespace("recipes");
});

after(async () => {
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

/** The menu's tools: the model names of `tool_find`'s summary lines. */
function menuOf(tools: DirectTools): string[] {
  const find = tools.anthropic.tools.find((t) => t.name === "tool_find");
  assert.ok(find, "lazy tools give the model tool_find");
  return [...find.description.matchAll(/^([A-Za-z0-9_-]+): /gm)].map((m) => m[1]!).sort();
}

function eagerOf(tools: DirectTools): string[] {
  return tools.anthropic.tools.map((t) => t.name).filter((name) => name !== "tool_find" && name !== "fetch_blob");
}

describe("seed 002's recipe: read-only tools made lazy", () => {
  it("puts the reads on the menu only, loaded through tool_find; sends the writes eagerly and asks for them; turns a business error into an error result; and the servers' order does not change the menu", async () => {
    const { id: toolset } = await admin.toolsets.create({ mcpServers: { tiktok: TIKTOK, fx: FX } });
    const tools = await td.directTools({ toolset, session: "readonly-lazy", ...OPTIONS });
    assert.deepEqual(tools.warnings, []);
    assert.deepEqual(menuOf(tools), READS);
    const eager = eagerOf(tools);
    for (const read of READS) assert.ok(!eager.includes(read), `${read} is read-only: on the menu, not sent`);
    for (const write of ["tiktok_campaign_create", "tiktok_ad_delete", "fx_effects", "fx_echo_plain"])
      assert.ok(eager.includes(write), `${write} is sent eagerly`);

    const envelope = '{"code":40001,"message":"No permission for advertiser 7"}';
    const fake = await startModelFake("anthropic", [
      {
        toolCalls: [
          { id: "t1", name: "tiktok_report_search", input: { text: "{}" } },
          { id: "t2", name: "tool_find", input: { names: ["tiktok_report_search", "tiktok_campaign_get"] } },
        ],
      },
      (request) => {
        const sent = (request.body.tools as { name: string }[]).map((t) => t.name);
        assert.deepEqual(sent.slice(-2), ["tiktok_report_search", "tiktok_campaign_get"], "the loaded reads come after the unchanged prefix");
        return {
          toolCalls: [
            { id: "t3", name: "tiktok_report_search", input: { text: envelope } },
            { id: "t4", name: "tiktok_campaign_get", input: { text: '{"code":0,"data":{"campaigns":[]}}' } },
            { id: "t5", name: "tiktok_ad_delete", input: { text: "ad 9" } },
          ],
        };
      },
      { text: "done" },
    ]);
    const seen: Anthropic.ToolResultBlockParam[] = [];
    try {
      const anthropic = new Anthropic({ baseURL: fake.baseUrl, apiKey: "test-key", maxRetries: 0 });
      const messages: Anthropic.MessageParam[] = [{ role: "user", content: "report" }];
      for (;;) {
        const answer = await anthropic.messages.create({ model: "claude-test", max_tokens: 100, messages, tools: tools.anthropic.tools });
        messages.push({ role: "assistant", content: answer.content });
        const uses = answer.content.filter((block) => block.type === "tool_use");
        if (uses.length === 0) break;
        const handled = Promise.all(uses.map((block) => tools.anthropic.handle(block)));
        if (uses.some((block) => block.name === "tiktok_ad_delete")) {
          // The write waits for a human (byRisk: unannotated is medium risk); the reads did not.
          const pending = await waitForPending(tools);
          assert.deepEqual(
            pending.map((p) => p.tool),
            ["tiktok.ad_delete"],
          );
          await tools.reject(pending[0]!.seq, { reason: "writes go through the back office" });
        }
        const results: Anthropic.ToolResultBlockParam[] = await handled;
        seen.push(...results);
        messages.push({ role: "user", content: results });
      }
      await fake.done;
    } finally {
      await fake.close();
    }
    const byId = new Map(seen.map((result) => [result.tool_use_id, result]));
    assert.equal(byId.get("t1")!.is_error, true);
    assert.match(textOf(byId.get("t1")!.content), /"tiktok_report_search" is not loaded yet, so nothing was sent\. Call tool_find/);
    const upstream = byId.get("t3")!;
    assert.equal(upstream.is_error, true);
    assert.deepEqual(textOf(upstream.content).split("\n"), [envelope, "Upstream error 40001: No permission for advertiser 7"]);
    assert.equal(byId.get("t4")!.is_error, undefined, "code 0 is not an error");
    assert.equal(byId.get("t5")!.is_error, true);
    assert.match(textOf(byId.get("t5")!.content), /A human rejected the call to "tiktok_ad_delete": writes go through the back office\. Nothing was sent\./);

    // The servers listed the other way round: the same menu, the same eager tools, no warning.
    const { id: reversed } = await admin.toolsets.create({ mcpServers: { fx: FX, tiktok: TIKTOK } });
    assert.equal(reversed, toolset, "a toolset is content-addressed: its servers' order is not part of it");
    const other = await td.directTools({ toolset: reversed, session: "readonly-lazy-reversed", ...OPTIONS });
    assert.deepEqual(other.warnings, []);
    assert.deepEqual(menuOf(other), READS);
    assert.deepEqual(eagerOf(other), eager);
    assert.equal(
      other.anthropic.tools.find((t) => t.name === "tool_find")!.description,
      tools.anthropic.tools.find((t) => t.name === "tool_find")!.description,
    );
  });
});

/** Polls the session's pending approvals until one shows (with a deadline that fails clearly). */
async function waitForPending(tools: DirectTools): Promise<readonly { seq: number; tool: string }[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pending = await tools.pending();
    if (pending.length > 0) return pending;
    if (Date.now() > deadline) throw new Error("no approval became pending within 10 s");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A tool result's content as text: the string, or its text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  assert.ok(Array.isArray(content), `a tool result's content is a string or blocks, not ${JSON.stringify(content)}`);
  return (content as { type: string; text?: string }[]).map((block) => (block.type === "text" ? (block.text ?? "") : `[${block.type}]`)).join("\n");
}
