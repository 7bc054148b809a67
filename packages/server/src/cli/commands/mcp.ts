import { existsSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CreateToolsetRequest } from "@tapedeck/protocol/api";
import { namespaceFlag, optionalFlag, parse, requireFlag, UsageError } from "../args.js";
import { readJsonFile } from "../context.js";
import type { Output } from "../print.js";
import { storeLocation } from "../store-location.js";
import { openCodeMode } from "../../mcp/open-code-mode.js";
import { mcpServerInfo } from "../../mcp/server-info.js";

/** The namespace of the runs when `--namespace` is not given: one local user. */
export const DEFAULT_MCP_NAMESPACE = "local";

/**
 * An MCP server on stdin/stdout, in code mode: the agent tools over the data folder (or
 * `--store`), runs executing in this process as with `tapedeck run`. stdout carries only the
 * protocol's JSON-RPC; everything else (the server's log, faults) goes to stderr. Ends when the
 * client closes stdin, or at SIGINT/SIGTERM; runs left waiting stay in the store.
 */
export async function mcpCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    toolset: { type: "string" },
    mode: { type: "string", default: "code" },
    store: { type: "string" },
    namespace: { type: "string" },
    labels: { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.mode !== "code") throw new UsageError(`--mode ${String(values.mode)} is not built; the mode is code`);
  const toolsetFlag = requireFlag(values.toolset, "toolset");
  const toolset = existsSync(toolsetFlag) ? (readJsonFile(toolsetFlag, "toolset file") as CreateToolsetRequest) : toolsetFlag;
  const labels = parseLabels(optionalFlag(values.labels, "labels"));
  const codeMode = await openCodeMode({
    serve: { dataDir: values.data, store: storeLocation(optionalFlag(values.store, "store"), values.data), logLevel: "warn" },
    toolset,
    namespace: namespaceFlag(values.namespace) ?? DEFAULT_MCP_NAMESPACE,
    ...(labels === undefined ? {} : { labels }),
    serverInfo: mcpServerInfo(),
    logFault: (line) => out.stderr(line),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    // The transport does not watch stdin's end: a host that closes the pipe ends the server.
    process.stdin.once("end", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await codeMode.server.connect(transport);
  await closed;
  await codeMode.close();
  return 0;
}

/** `--labels k=v,k2=v2`. */
function parseLabels(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const labels: Record<string, string> = {};
  for (const item of value.split(",")) {
    const match = /^([^=]+)=(.*)$/.exec(item);
    if (!match) throw new UsageError(`--labels must be k=v,k2=v2, not ${JSON.stringify(value)}`);
    labels[match[1]!] = match[2]!;
  }
  return labels;
}
