import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BLOB_BYTES } from "./content-samples.js";
import { connectFixture, connectStdio, listAllTools, mcpError } from "./fixture-clients.js";
import type { Connection, TransportName } from "./fixture-clients.js";
import { IDEMPOTENCY_META_KEY } from "./fixture-state.js";

/**
 * The fixture servers, exercised with the SDK's own client over both transports. Nothing here
 * sleeps: tests wait on results, notifications, transport errors and closes.
 */

const BASE_TOOLS = ["echo", "echo_plain", "slow", "hang", "fail", "image", "mixed", "effects", "effects_log", "huge", "drop", "add_tool", "remove_tool"];

async function using<T>(connection: Connection, body: (connection: Connection) => Promise<T>): Promise<T> {
  try {
    return await body(connection);
  } finally {
    await connection.close();
  }
}

function call(connection: Connection, name: string, args: Record<string, unknown> = {}, _meta?: Record<string, unknown>): Promise<CallToolResult> {
  return connection.client.callTool({ name, arguments: args, _meta }) as Promise<CallToolResult>;
}

function texts(result: CallToolResult): string[] {
  return result.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
}

for (const transport of ["stdio", "http"] as const satisfies readonly TransportName[]) {
  describe(`fixture over ${transport}`, () => {
    it("lists every page, and the pages add up to the unpaginated list", async () => {
      const flags = { many: 10, names: ["list-items", "get.item"] };
      const whole = await using(await connectFixture(transport, flags), (c) => listAllTools(c.client));
      const paged = await using(await connectFixture(transport, { ...flags, page: 4 }), (c) => listAllTools(c.client));
      assert.equal(whole.pages, 1);
      assert.equal(paged.pages, Math.ceil(whole.tools.length / 4));
      assert.deepEqual(paged.tools, whole.tools);
      const names = whole.tools.map((tool) => tool.name);
      for (const name of [...BASE_TOOLS, "op_0", "op_9", "list-items", "get.item"]) assert.ok(names.includes(name), name);
      assert.equal(names.length, BASE_TOOLS.length + 12);
      assert.ok(whole.tools.every((tool) => tool.description !== undefined && tool.inputSchema.type === "object"));
    });

    it("echoes with and without structured content, and reports isError", async () => {
      await using(await connectFixture(transport), async (c) => {
        const echo = await call(c, "echo", { text: "hi" });
        assert.deepEqual(echo.structuredContent, { text: "hi" });
        assert.deepEqual(texts(echo), ["hi"]);
        const plain = await call(c, "echo_plain", { text: "ho" });
        assert.equal(plain.structuredContent, undefined);
        assert.deepEqual(texts(plain), ["ho"]);
        const fail = await call(c, "fail", { message: "nope" });
        assert.equal(fail.isError, true);
        assert.deepEqual(texts(fail), ["nope"]);
      });
    });

    it("returns every content kind", async () => {
      await using(await connectFixture(transport), async (c) => {
        const image = await call(c, "image");
        assert.deepEqual(
          image.content.map((block) => block.type),
          ["image", "text"],
        );
        const mixed = await call(c, "mixed");
        assert.deepEqual(
          mixed.content.map((block) => block.type),
          ["text", "audio", "resource_link", "resource"],
        );
        const embedded = mixed.content[3];
        assert.ok(embedded?.type === "resource" && "blob" in embedded.resource);
        assert.deepEqual(new Uint8Array(Buffer.from(embedded.resource.blob, "base64")), BLOB_BYTES);
      });
    });

    it("records the idempotency key and traceparent of each call, and performs each effect once", async () => {
      await using(await connectFixture(transport), async (c) => {
        const meta = (key: string) => ({ [IDEMPOTENCY_META_KEY]: key, traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` });
        const first = await call(c, "effects", { op: "pay" }, meta("k1"));
        const retry = await call(c, "effects", { op: "pay" }, meta("k1"));
        const other = await call(c, "effects", { op: "ship" }, meta("k2"));
        assert.deepEqual(first.structuredContent, { count: 1, key: "k1", traceparent: meta("k1").traceparent, attemptsForKey: 1 });
        assert.deepEqual(retry.structuredContent, { count: 1, key: "k1", traceparent: meta("k1").traceparent, attemptsForKey: 2 });
        assert.equal(other.structuredContent?.["count"], 2);
        const log = (await call(c, "effects_log")).structuredContent;
        assert.deepEqual(log?.["keys"], [
          { key: "k1", op: "pay", attempts: 2, traceparents: [meta("k1").traceparent, meta("k1").traceparent] },
          { key: "k2", op: "ship", attempts: 1, traceparents: [meta("k2").traceparent] },
        ]);
      });
    });

    it("announces tool-list changes to the caller", async () => {
      await using(await connectFixture(transport), async (c) => {
        const changes: number[] = [];
        let announced: () => void = () => undefined;
        c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changes.push(changes.length);
          announced();
        });
        const next = () => new Promise<void>((resolve) => (announced = resolve));
        const added = next();
        await call(c, "add_tool", { name: "late" });
        await added;
        assert.deepEqual(texts(await call(c, "late", { text: "x" })), ["late: x"]);
        const removed = next();
        await call(c, "remove_tool", { name: "echo" });
        await removed;
        const names = (await listAllTools(c.client)).tools.map((tool) => tool.name);
        assert.ok(names.includes("late") && !names.includes("echo"));
        assert.equal((await call(c, "echo", { text: "x" })).isError, true);
        assert.equal((await call(c, "remove_tool", { name: "echo" })).isError, true);
        assert.equal(changes.length, 2);
      });
    });

    it("cancels a slow call and keeps serving", async () => {
      await using(await connectFixture(transport), async (c) => {
        const abort = new AbortController();
        const slow = c.client.callTool({ name: "slow", arguments: { ms: 600_000 } }, undefined, { signal: abort.signal });
        abort.abort("test cancels");
        await assert.rejects(slow);
        assert.deepEqual(texts(await call(c, "slow", { ms: 1 })), ["slept 1 ms"]);
      });
    });

    it("returns a huge text block", async () => {
      await using(await connectFixture(transport), async (c) => {
        const [text] = texts(await call(c, "huge", { mb: 1 }));
        assert.equal(text?.length, 1024 * 1024);
      });
    });
  });
}

describe("dropped connections and misbehaving servers over stdio", () => {
  it("drop() ends the process, which fails the call", async () => {
    await using(await connectStdio({}), async (c) => {
      const dropped = call(c, "drop");
      await assert.rejects(dropped, mcpError(ErrorCode.ConnectionClosed));
      await c.closed;
    });
  });

  it("exit-mid-call fails the call when the process exits", async () => {
    await using(await connectStdio({ misbehave: "exit-mid-call" }), async (c) => {
      assert.ok((await c.client.listTools()).tools.length > 0);
      await assert.rejects(call(c, "echo", { text: "x" }), mcpError(ErrorCode.ConnectionClosed));
    });
  });

  it("malformed output is a transport error; the pending call fails when the client closes", async () => {
    const c = await connectStdio({ misbehave: "malformed" });
    const reported = c.nextError();
    const pending = call(c, "echo", { text: "x" });
    const error = await reported;
    assert.ok(error instanceof SyntaxError, String(error));
    await c.close();
    await assert.rejects(pending, mcpError(ErrorCode.ConnectionClosed));
  });

  it("never-answer leaves only the client's timeout", async () => {
    await using(await connectStdio({ misbehave: "never-answer" }), async (c) => {
      const pending = c.client.callTool({ name: "echo", arguments: { text: "x" } }, undefined, { timeout: 200 });
      await assert.rejects(pending, mcpError(ErrorCode.RequestTimeout));
    });
  });

  it("a result over 10 MiB overflows the stdio client's default line buffer, and fits a larger one", async () => {
    await using(await connectStdio({}), async (c) => {
      const reported = c.nextError();
      const pending = call(c, "huge", { mb: 11 });
      assert.match((await reported).message, /ReadBuffer exceeded maximum size/);
      await c.closed;
      await assert.rejects(pending);
    });
    // The SDK's stdio ReadBuffer concatenates every chunk onto the whole line so far (quadratic):
    // 50 MiB takes ~20 s this way, so 11 MiB shows the point.
    await using(await connectStdio({}, 16 * 1024 * 1024), async (c) => {
      const [text] = texts(await call(c, "huge", { mb: 11 }));
      assert.equal(text?.length, 11 * 1024 * 1024);
    });
  });
});
