import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { McpUnauthorizedError, type McpBearerAuth } from "./mcp-bearer-auth.js";
import { McpConnection } from "./mcp-connection.js";

/**
 * `auth: { token(), onUnauthorized() }` against a Streamable HTTP MCP server that answers 401
 * unless the bearer is its current token; rotating that token forces a refresh.
 */

/** A stateless MCP server with one tool, `whoami`, behind a bearer check. */
class BearerServer {
  validToken = "token-1";
  /** The bearer of every request, in order ("" when none was sent). */
  readonly bearers: string[] = [];
  rejected = 0;
  readonly #http: Server = createServer((request, response) => {
    const bearer = /^Bearer (.*)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
    this.bearers.push(bearer);
    if (bearer !== this.validToken) {
      this.rejected++;
      response.writeHead(401, { "WWW-Authenticate": 'Bearer error="invalid_token"' }).end();
      return;
    }
    const server = new McpServer({ name: "bearer-server", version: "1.0.0" });
    server.registerTool("whoami", { description: "Says which token it was called with." }, () => ({ content: [{ type: "text", text: bearer }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => void server.close());
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => response.destroy());
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#http.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#http.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }
}

/** Client-side credentials: a cached token that `onUnauthorized` reloads from `source`. */
function cachedAuth(source: () => string): McpBearerAuth & { reads: number; refreshes: number } {
  let cached = source();
  return {
    reads: 0,
    refreshes: 0,
    token() {
      this.reads++;
      return cached;
    },
    onUnauthorized() {
      this.refreshes++;
      cached = source();
    },
  };
}

const call = (connection: McpConnection) => connection.callTool("whoami", {}, {}, 10_000, new AbortController().signal);

describe("McpConnection auth (expiring bearer credentials)", () => {
  const server = new BearerServer();
  let url = "";
  before(async () => {
    url = await server.start();
  });
  after(() => server.stop());

  it("reads the token before every request, so a rotation needs no 401", async () => {
    server.validToken = "token-1";
    const auth = {
      reads: 0,
      refreshes: 0,
      token: () => {
        auth.reads++;
        return server.validToken;
      },
      onUnauthorized: () => {
        auth.refreshes++;
      },
    };
    const connection = new McpConnection({ url }, "bearer", { auth });
    try {
      const seen = server.bearers.length;
      assert.deepEqual((await call(connection)).content, [{ type: "text", text: "token-1" }]);
      server.validToken = "token-2";
      assert.deepEqual((await call(connection)).content, [{ type: "text", text: "token-2" }]);
      const requests = server.bearers.length - seen;
      assert.ok(requests >= 4, `initialize, initialized, 2 calls: ${requests} requests`);
      assert.equal(auth.reads, requests, "one token() per HTTP request");
      assert.equal(auth.refreshes, 0);
      assert.equal(server.rejected, 0);
    } finally {
      await connection.close();
    }
  });

  it("on a 401 calls onUnauthorized once and retries that request once, which succeeds", async () => {
    server.validToken = "token-3";
    const auth = cachedAuth(() => server.validToken);
    const connection = new McpConnection({ url }, "bearer", { auth });
    try {
      assert.deepEqual((await call(connection)).content, [{ type: "text", text: "token-3" }]);
      server.validToken = "token-4";
      const rejectedBefore = server.rejected;
      const seen = server.bearers.length;
      assert.deepEqual((await call(connection)).content, [{ type: "text", text: "token-4" }]);
      assert.equal(auth.refreshes, 1);
      assert.equal(server.rejected - rejectedBefore, 1);
      assert.deepEqual(server.bearers.slice(seen), ["token-3", "token-4"], "the rejected request, then its one retry");
    } finally {
      await connection.close();
    }
  });

  it("a second 401 after the refresh fails the call clearly, without a loop", async () => {
    server.validToken = "token-5";
    const auth = cachedAuth(() => "token-5");
    const connection = new McpConnection({ url }, "bearer", { auth });
    try {
      await call(connection);
      server.validToken = "token-6";
      const seen = server.bearers.length;
      await assert.rejects(call(connection), (error: unknown) => {
        assert.ok(error instanceof McpUnauthorizedError, String(error));
        assert.match(error.message, /^bearer answered 401 Unauthorized again after auth\.onUnauthorized\(\) refreshed the credentials/);
        return true;
      });
      assert.equal(auth.refreshes, 1);
      assert.deepEqual(server.bearers.slice(seen), ["token-5", "token-5"], "one request, one retry, then nothing");
      await assert.rejects(new McpConnection({ url }, "bearer", { auth: cachedAuth(() => "never") }).listTools(), McpUnauthorizedError, "on connect too");
    } finally {
      await connection.close();
    }
  });

  it("auth together with an Authorization header is an error at construction", () => {
    const auth = cachedAuth(() => "t");
    assert.throws(
      () => new McpConnection({ url, headers: { authorization: "Bearer fixed" } }, "bearer", { auth }),
      /^Error: MCP server bearer: an Authorization header and auth are set together, but they are mutually exclusive/,
    );
    assert.throws(() => new McpConnection({ command: "node", args: [] }, "local", { auth }), /apply to Streamable HTTP servers/);
  });
});
