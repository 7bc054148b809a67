import assert from "node:assert/strict";
import type { JsonValue } from "@tapedeck/protocol";
import { Ajv2020 } from "ajv/dist/2020.js";
import { callLibraryTool } from "../call-library-tool.js";
import type { Capability, LibraryTool, ToolContext, ToolResult } from "../library-tool.js";

/**
 * Calls a library tool as the engine will: the arguments must match the tool's input schema (the
 * engine validates them before the call), and a result must match its output schema (which
 * becomes the result's type in scripts, so it must not lie).
 */

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

export async function callTool<C extends Capability>(tool: LibraryTool<C>, args: JsonValue, ctx: ToolContext<C>): Promise<ToolResult> {
  const input = ajv.compile(tool.inputSchema);
  assert.ok(input(args), `${tool.name}: the test's arguments break the input schema: ${ajv.errorsText(input.errors)}`);
  const outcome = await callLibraryTool(tool, args, ctx);
  if (outcome.kind === "result" && tool.outputSchema !== undefined) {
    const output = ajv.compile(tool.outputSchema);
    assert.ok(output(outcome.value), `${tool.name}: the result breaks the output schema: ${ajv.errorsText(output.errors)}\n${JSON.stringify(outcome.value)}`);
  }
  return outcome;
}

/** The result's value; fails the test on a failure. */
export async function resultOf<C extends Capability>(tool: LibraryTool<C>, args: JsonValue, ctx: ToolContext<C>): Promise<{ [key: string]: JsonValue }> {
  const outcome = await callTool(tool, args, ctx);
  assert.equal(outcome.kind, "result", outcome.kind === "failure" ? `${outcome.failure.code}: ${outcome.failure.message}` : "");
  return (outcome as { value: { [key: string]: JsonValue } }).value;
}

/** The failure; fails the test on a result. */
export async function failureOf<C extends Capability>(tool: LibraryTool<C>, args: JsonValue, ctx: ToolContext<C>): Promise<{ code: string; message: string }> {
  const outcome = await callTool(tool, args, ctx);
  assert.equal(outcome.kind, "failure", outcome.kind === "result" ? `expected a failure, got ${JSON.stringify(outcome.value)}` : "");
  return (outcome as { failure: { code: string; message: string } }).failure;
}

/** A context with nothing but a clock and a signal that never aborts. */
export function baseContext(now = 0): ToolContext {
  return { now: () => now, signal: new AbortController().signal };
}
