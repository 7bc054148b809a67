import { defineTool, failure, result } from "../library-tool.js";
import { WRITE_APPROVAL } from "./write-approval.js";

/** `files.write`: replaces or creates a workspace file, atomically (see `Workspace.write`). */
export const writeFileTool = defineTool<{ path: string; content: string }, "workspace">({
  name: "write",
  description:
    "Writes a text file of the workspace, replacing it whole or creating it (and its missing folders). The write is atomic: " +
    "a reader sees the old content or the new, never a part. Paths are relative to the workspace. To change part of a file, use patch.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, description: "Relative to the workspace." },
      content: { type: "string", description: "The whole new content." },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: { path: { type: "string" }, created: { type: "boolean" }, bytes: { type: "integer" } },
    required: ["path", "created", "bytes"],
    additionalProperties: false,
  },
  risk: "medium",
  approval: WRITE_APPROVAL,
  // IronClaw's defaults for its file tools: 20 a minute, 200 an hour.
  rateLimit: { perMinute: 20, perHour: 200 },
  needs: ["workspace"],
  execute: async ({ path, content }, { workspace }) => {
    const written = await workspace.write(path, content);
    if (!written.ok) return failure(written.code, written.message);
    return result({ path: written.relative, created: written.created, bytes: Buffer.byteLength(content) });
  },
});
