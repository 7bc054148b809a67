import { after } from "node:test";
import { ToolError, type ToolsetSpec } from "@tapedeck/protocol";
import { testSandboxes } from "../test-support/engines.js";
import { startLoopbackServer, type LoopbackServer } from "../test-support/loopback-http.js";
import { startHttpFixture, type HttpFixture } from "../test-support/mcp/http-fixture.js";
import { describeToolSourceContract } from "../test-support/tool-source-contract.js";
import { HttpToolSource } from "./http/http-tool-source.js";
import { InProcessHostTools } from "./in-process-host-tools.js";
import { McpToolSource } from "./mcp/mcp-tool-source.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "./tool-source.js";

/**
 * The tool source contract (`test-support/tool-source-contract.ts`) against each source the
 * engine has: host tools in this process, an MCP server (the fixture, over Streamable HTTP on
 * loopback), and the built-in http tool (a server on loopback).
 */
after(() => testSandboxes().close());

const IMPORTS = `import { t, ToolError } from "tapedeck:tools";`;

{
  const keys: string[] = [];
  const module = {
    t: {
      echo: (args: { text: string }) => Promise.resolve({ text: args.text }),
      refuse: () => Promise.reject(new ToolError("not_found", "There is no such thing.")),
      keyed: (_args: unknown, ctx: { idempotencyKey: string }) => {
        keys.push(ctx.idempotencyKey);
        return Promise.resolve(null);
      },
    },
  };
  const tool = (description: string) => ({ description, inputSchema: { type: "object" } });
  const spec = { hostTools: { t: { echo: tool("Echoes text."), refuse: tool("Always refuses."), keyed: tool("Records its key.") } } } as ToolsetSpec;
  describeToolSourceContract("host tools in process (InProcessHostTools)", {
    start: () =>
      Promise.resolve({
        options: (wrap) => ({ sources: { host: wrap(new InProcessHostTools(module)) } }),
        spec,
        imports: IMPORTS,
        answers: { expression: `t.echo({ text: "hi" })`, value: { text: "hi" } },
        refused: { expression: "t.refuse({})", code: "not_found", message: "There is no such thing." },
        keyed: "t.keyed({})",
        keys: () => Promise.resolve([...keys]),
      }),
    stop: () => Promise.resolve(),
  });
}

/**
 * An McpToolSource whose calls go through `wrap`: it stays the engine's MCP client layer (the one
 * that lists the servers' tools at registration and so knows them), as a plain wrapper would not.
 */
class WrappedMcp extends McpToolSource {
  readonly #outer: ToolSource;
  constructor(wrap: (source: ToolSource) => ToolSource) {
    super();
    this.#outer = wrap({ call: (request) => super.call(request) });
  }
  override call(request: ToolCallRequest): Promise<ToolOutcome> {
    return this.#outer.call(request);
  }
}

{
  let fixture: HttpFixture;
  describeToolSourceContract("MCP (McpToolSource, Streamable HTTP)", {
    start: async () => {
      fixture = await startHttpFixture();
      return {
        options: (wrap) => ({ sources: { mcp: new WrappedMcp(wrap) } }),
        spec: { mcpServers: { t: { url: fixture.url } } },
        imports: IMPORTS,
        answers: { expression: `t.echo({ text: "hi" })`, value: { text: "hi" } },
        refused: { expression: `t.fail({ message: "no such repo" })`, code: "tool_error", message: "no such repo" },
        keyed: `t.effects({ op: "contract" })`,
        keys: () => Promise.resolve(fixture.state.effectsLog().keys.flatMap((record) => Array<string>(record.attempts).fill(record.key))),
      };
    },
    stop: () => fixture.close(),
  });
}

{
  let server: LoopbackServer;
  const base = () => `http://127.0.0.1:${server.port}`;
  describeToolSourceContract("the built-in http tool (HttpToolSource)", {
    start: async () => {
      server = await startLoopbackServer({
        "/hello": (_req, res) => res.end("hello"),
        "/keyed": (_req, res) => res.writeHead(204).end(),
      });
      return {
        options: (wrap) => ({ sources: { builtin: wrap(new HttpToolSource({ unsafeAllowLoopbackForTests: true })) } }),
        spec: { http: { allow: ["127.0.0.1"] } },
        imports: `import { ToolError } from "tapedeck:tools";`,
        answers: { expression: `fetch("${base()}/hello").then((r) => r.text())`, value: "hello" },
        refused: { expression: `fetch("http://elsewhere.example/")`, code: "refused", message: "elsewhere.example" },
        keyed: `fetch("${base()}/keyed")`,
        keys: () => Promise.resolve(server.received.filter((r) => r.path === "/keyed").map((r) => String(r.headers["idempotency-key"]))),
      };
    },
    stop: () => server.close(),
  });
}
