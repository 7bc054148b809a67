import { readFileSync } from "node:fs";

/** The name and version an MCP server of Tapedeck's says in `initialize` (stdio and HTTP alike): this package's. */
export function mcpServerInfo(): { readonly name: string; readonly version: string } {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return { name: "tapedeck", version };
}
