import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { failure } from "./test-support/failure.js";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * A misconfigured stdio MCP server, registered through a real `tapedeck serve`: the answer
 * carries the server's own message (its last stderr lines), and so does the server's log.
 */
const FILESYSTEM = fileURLToPath(new URL("../../../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));

let server: ServeChild;

before(async () => {
  server = await startServeChild();
});

after(async () => {
  await server.stop();
  server.cleanup();
});

/** The message of the server's JSON log line (its `err.message`, else `msg`), or undefined for other lines. */
function logMessage(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { msg?: unknown; err?: { message?: unknown } };
    const message = entry.err?.message ?? entry.msg;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

describe("a stdio MCP server that fails to start", () => {
  it("server-filesystem pointed at a missing directory: the 422 and the server's log carry its message, not only 'Connection closed'", async () => {
    const admin = server.client(server.adminKey!);
    const missing = join(server.dataDir, "no-such-directory");
    const error = await failure(admin.toolsets.create({ mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, missing] } } }));
    assert.equal(error.status, 422);
    assert.match(
      error.message,
      /cannot list the server's tools: .*Connection closed\. The server's last stderr lines:\n.*\n {2}Error: None of the specified directories are accessible/,
    );
    const stopped = /^MCP server fs \(stdio\) stopped\. The server's last stderr lines:\n/;
    const line = await server.stderrLine((l) => stopped.test(logMessage(l) ?? ""));
    assert.match(logMessage(line) ?? "", /\n {2}Error: None of the specified directories are accessible(\n|$)/);
  });
});
