import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** The installed command, as a host's `mcpServers` entry runs it. */
export const TAPEDECK_BIN = fileURLToPath(new URL("../../../bin/tapedeck.js", import.meta.url));
/** A reference MCP server from the npm registry, for the toolset the scripts call. */
export const MEMORY_SERVER = fileURLToPath(new URL("../../../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js", import.meta.url));

/** A scratch folder with a toolset file of one MCP server, `graph` (server-memory, its file in the folder). */
export interface Workspace {
  readonly dir: string;
  readonly toolsetFile: string;
  readonly data: string;
  cleanup(): void;
}

export function memoryWorkspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "tapedeck-mcp-face-"));
  const toolsetFile = join(dir, "toolset.json");
  writeFileSync(
    toolsetFile,
    JSON.stringify({ mcpServers: { graph: { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } } } }),
  );
  return { dir, toolsetFile, data: join(dir, "data"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `tapedeck mcp` args for a workspace, and any more flags. */
export function mcpArgs(ws: Workspace, more: readonly string[] = []): string[] {
  return [TAPEDECK_BIN, "mcp", "--toolset", ws.toolsetFile, "--data", ws.data, ...more];
}

/** The official SDK client connected to `tapedeck mcp` over stdio; `errors` collects what the client could not parse (anything but JSON-RPC on stdout). */
export async function connectClient(ws: Workspace, more: readonly string[] = []): Promise<{ client: Client; errors: Error[]; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: mcpArgs(ws, more),
    env: { ...(process.env as Record<string, string>) },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = new Client({ name: "tapedeck-test", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, errors, stderr: () => stderr };
}

/**
 * `tapedeck mcp` spoken to line by line, as a host's transport does, for what the SDK client
 * will not do: send the same request id twice. Every stdout line is kept and must be JSON-RPC.
 */
export class RawMcpChild {
  readonly lines: string[] = [];
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting = new Map<string, (message: Record<string, unknown>) => void>();
  readonly closed: Promise<number | null>;
  #partial = "";
  stderr = "";

  constructor(args: readonly string[]) {
    this.#child = spawn(process.execPath, args, { env: process.env, stdio: ["pipe", "pipe", "pipe"] });
    this.closed = new Promise((resolve) => this.#child.on("close", resolve));
    this.#child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
    this.#child.stdout.on("data", (chunk: Buffer) => {
      const parts = (this.#partial + chunk.toString("utf8")).split("\n");
      this.#partial = parts.pop()!;
      for (const line of parts) this.#line(line);
    });
  }

  #line(line: string): void {
    this.lines.push(line);
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // Kept in `lines`: the test says stdout carried something else.
    }
    if ("id" in message && ("result" in message || "error" in message)) {
      const key = JSON.stringify(message.id);
      this.#waiting.get(key)?.(message);
      this.#waiting.delete(key);
    }
  }

  /** Sends a request with this id and resolves with its answer (result or error). */
  request(id: number | string, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((resolve) => this.#waiting.set(JSON.stringify(id), resolve));
    this.#child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return answered;
  }

  notify(method: string, params: Record<string, unknown> = {}): void {
    this.#child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
  }

  /** Writes a line as is (malformed JSON-RPC). */
  writeLine(line: string): void {
    this.#child.stdin.write(line + "\n");
  }

  async initialize(): Promise<Record<string, unknown>> {
    const answer = await this.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
    this.notify("notifications/initialized");
    return answer;
  }

  /** Closes stdin, as a host that quits does: the server ends. */
  close(): Promise<number | null> {
    this.#child.stdin.end();
    return this.closed;
  }
}
