import { defineTool, result } from "../library-tool.js";

/** `echo.echo`: answers its message — for trying a toolset, an approval rule or a rate limit without side effects. */
export const echoTool = defineTool<{ message: string }>({
  name: "echo",
  description: "Returns the message it is given, unchanged. Use it to test that tools are reachable; it does nothing else.",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string", description: "Any text." } },
    required: ["message"],
    additionalProperties: false,
  },
  outputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"], additionalProperties: false },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: ({ message }) => Promise.resolve(result({ message })),
});
