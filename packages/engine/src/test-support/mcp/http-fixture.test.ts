import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, mcpError } from "./fixture-clients.js";
import { IDEMPOTENCY_META_KEY } from "./fixture-state.js";
import { startHttpFixture } from "./http-fixture.js";
import type { HttpFixtureOptions } from "./http-fixture.js";

/** What only the HTTP fixture does: sessions, bearer auth, dropped sockets, protocol faults. */

async function withFixture(options: HttpFixtureOptions, body: (fixture: Awaited<ReturnType<typeof startHttpFixture>>) => Promise<void>): Promise<void> {
  const fixture = await startHttpFixture(options);
  try {
    await body(fixture);
  } finally {
    await fixture.close();
  }
}

const unauthorized = (e: unknown): boolean => e instanceof StreamableHTTPError && e.code === 401;

describe("HTTP fixture", () => {
  it("listens on 127.0.0.1, counts requests and sessions", async () => {
    await withFixture({}, async (fixture) => {
      assert.match(fixture.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const a = await connectHttp(fixture.url);
      const b = await connectHttp(fixture.url);
      assert.equal(fixture.sessions(), 2);
      const before = fixture.requests;
      await a.client.listTools();
      assert.ok(fixture.requests > before);
      await a.close();
      assert.equal(fixture.sessions(), 1);
      await b.close();
      assert.equal(fixture.sessions(), 0);
    });
  });

  it("answers 401 without the current bearer token", async () => {
    let token = "t1";
    await withFixture({ requireBearer: () => token }, async (fixture) => {
      await assert.rejects(connectHttp(fixture.url), unauthorized);
      await assert.rejects(connectHttp(fixture.url, { Authorization: "Bearer wrong" }), unauthorized);
      const c = await connectHttp(fixture.url, { Authorization: "Bearer t1" });
      token = "t2";
      await assert.rejects(c.client.listTools(), unauthorized);
      token = "t1";
      assert.ok((await c.client.listTools()).tools.length > 0);
      await c.close();
    });
  });

  it("drop() before the response fails the POST; the next session shares the ledger", async () => {
    await withFixture({}, async (fixture) => {
      const meta = { [IDEMPOTENCY_META_KEY]: "k1" };
      const first = await connectHttp(fixture.url);
      await first.client.callTool({ name: "effects", arguments: { op: "pay" }, _meta: meta });
      const dropped = first.client.callTool({ name: "drop", arguments: { stage: "before-response" } });
      await assert.rejects(dropped, (e: unknown) => e instanceof TypeError && e.message === "fetch failed");
      await first.close();
      const second = await connectHttp(fixture.url);
      const retry = (await second.client.callTool({ name: "effects", arguments: { op: "pay" }, _meta: meta })) as CallToolResult;
      assert.deepEqual(retry.structuredContent, { count: 1, key: "k1", traceparent: null, attemptsForKey: 2 });
      await second.close();
    });
  });

  it("drop() mid-stream breaks the SSE stream: the SDK client reports it but leaves the call pending", async () => {
    await withFixture({}, async (fixture) => {
      const c = await connectHttp(fixture.url);
      const disconnected = c.nextError();
      const dropped = c.client.callTool({ name: "drop", arguments: {} });
      const outcome = dropped.then(
        () => "answered",
        (e: unknown) => e,
      );
      assert.match((await disconnected).message, /SSE stream disconnected/);
      assert.ok((await c.client.listTools()).tools.length > 0, "the session still serves");
      await c.close();
      const error = await outcome;
      assert.ok(mcpError(ErrorCode.ConnectionClosed)(error), String(error));
    });
  });

  it("a tool-list edit outlives the session that made it", async () => {
    await withFixture({}, async (fixture) => {
      const first = await connectHttp(fixture.url);
      await first.client.callTool({ name: "remove_tool", arguments: { name: "echo" } });
      await first.close();
      const second = await connectHttp(fixture.url);
      assert.ok(!(await second.client.listTools()).tools.some((tool) => tool.name === "echo"));
      await second.close();
    });
  });

  it("returns 50 MiB by default", async () => {
    await withFixture({}, async (fixture) => {
      const c = await connectHttp(fixture.url);
      const result = (await c.client.callTool({ name: "huge", arguments: {} })) as CallToolResult;
      const [block] = result.content;
      assert.equal(block?.type === "text" ? block.text.length : 0, 50 * 1024 * 1024);
      await c.close();
    });
  });

  for (const [mode, expected] of [
    ["malformed", (e: unknown) => e instanceof SyntaxError],
    ["exit-mid-call", (e: unknown) => e instanceof TypeError && /fetch failed/.test(e.message)],
    ["never-answer", mcpError(ErrorCode.RequestTimeout)],
  ] as const) {
    it(`misbehave ${mode}: initialize and tools/list work, the call fails`, async () => {
      await withFixture({ misbehave: mode }, async (fixture) => {
        const c = await connectHttp(fixture.url);
        assert.ok((await c.client.listTools()).tools.length > 0);
        await assert.rejects(c.client.callTool({ name: "echo", arguments: { text: "x" } }, undefined, { timeout: 200 }), expected);
        await c.close();
      });
    });
  }
});
