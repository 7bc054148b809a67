import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { createFixtureServer } from "./fixture-tools.js";
import { DROPPED_EXIT_CODE, MALFORMED_LINE, parseMisbehaviour, STDERR_NOISE_LINES, stderrLastLine } from "./misbehaviour.js";
import type { Misbehaviour } from "./misbehaviour.js";

/**
 * Serves the fixture over stdio:
 *   node stdio-main.js [--many N] [--page N] [--names a,b] [--read-only-names a,b] [--misbehave malformed|exit-mid-call|never-answer|stderr-exit]
 * `drop()`, `exit-mid-call` and `stderr-exit` end the process with DROPPED_EXIT_CODE.
 */

const { values } = parseArgs({
  options: {
    many: { type: "string" },
    page: { type: "string" },
    names: { type: "string" },
    "read-only-names": { type: "string" },
    misbehave: { type: "string" },
  },
});

function count(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} takes a whole number, got ${JSON.stringify(value)}`);
  return n;
}

function misbehave(mode: Misbehaviour, request: JSONRPCRequest): void {
  if (mode === "exit-mid-call") process.exit(DROPPED_EXIT_CODE);
  if (mode === "stderr-exit") {
    const lines = Array.from({ length: STDERR_NOISE_LINES }, (_, i) => `noise ${i}`);
    process.stderr.write(`${[...lines, stderrLastLine(process.env)].join("\n")}\n`, () => process.exit(DROPPED_EXIT_CODE));
    return;
  }
  if (mode === "never-answer") return;
  // A line that is not JSON, then one that is JSON but not a JSON-RPC message (a result must be an object).
  process.stdout.write(`${MALFORMED_LINE}\n`);
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: request.id, result: "not an object" })}\n`);
}

const server = createFixtureServer({
  manyTools: count("many", values.many),
  paginate: count("page", values.page),
  names: values.names?.split(",").filter((name) => name !== ""),
  readOnlyNames: values["read-only-names"]?.split(",").filter((name) => name !== ""),
  dropConnection: () => process.exit(DROPPED_EXIT_CODE),
});
const transport = new StdioServerTransport();
await server.connect(transport);

const mode = values.misbehave === undefined ? undefined : parseMisbehaviour(values.misbehave);
if (mode !== undefined) {
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    if (isJSONRPCRequest(message) && message.method === "tools/call") misbehave(mode, message);
    else deliver?.(message);
  };
}
