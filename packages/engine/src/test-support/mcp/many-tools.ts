import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

/**
 * The tools `op_0 … op_{n-1}` of option `manyTools`, for the 300-tool registration benchmark.
 * They cycle through four small schemas shaped like real APIs (get, search, update, list), each
 * with an output schema, so pinning and declaration generation do realistic work.
 */

const outputSchema = {
  op: z.string().describe("The tool that answered."),
  ok: z.boolean(),
  received: z.record(z.string(), z.unknown()).describe("The arguments, as the server parsed them."),
};

interface Shape {
  readonly summary: string;
  readonly input: z.ZodRawShape;
  readonly annotations: ToolAnnotations;
}

const shapes: readonly Shape[] = [
  {
    summary: "Fetches one record by id.",
    input: {
      id: z.string().min(1).describe("Record id."),
      fields: z.array(z.string()).optional().describe("Fields to return; all when omitted."),
    },
    annotations: { readOnlyHint: true },
  },
  {
    summary: "Searches records by free text.",
    input: {
      query: z.string().describe("Search text."),
      limit: z.number().int().min(1).max(100).optional().describe("Page size, 1–100."),
      cursor: z.string().optional().describe("Cursor from a previous page."),
    },
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  {
    summary: "Updates fields of one record.",
    input: {
      id: z.string().min(1),
      patch: z.object({ title: z.string().optional(), done: z.boolean().optional() }),
    },
    annotations: { readOnlyHint: false, idempotentHint: true },
  },
  {
    summary: "Lists records by status.",
    input: {
      status: z.enum(["open", "closed", "archived"]),
      since: z.string().optional().describe("ISO 8601 date-time lower bound."),
    },
    annotations: { readOnlyHint: true },
  },
];

/** Registers `op_0 … op_{count-1}` on `server`. */
export function registerManyTools(server: McpServer, count: number): [string, RegisteredTool][] {
  const tools: [string, RegisteredTool][] = [];
  for (let i = 0; i < count; i++) {
    const shape = shapes[i % shapes.length] as Shape;
    const name = `op_${i}`;
    const config = {
      description: `Operation ${i}. ${shape.summary}`,
      inputSchema: shape.input,
      outputSchema,
      annotations: shape.annotations,
    };
    const tool = server.registerTool(name, config, (args: Record<string, unknown>) => {
      const structuredContent = { op: name, ok: true, received: args };
      return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
    });
    tools.push([name, tool]);
  }
  return tools;
}
