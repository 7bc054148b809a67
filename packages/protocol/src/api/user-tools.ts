import type { Diagnostic } from "../diagnostic.js";
import type { JsonObject, JsonValue } from "../json.js";
import type { UserToolGrantsSpec, UserToolLimitsSpec } from "../user-tool.js";
import { diagnostic } from "./diagnostic.js";
import { anyJson } from "./fields.js";
import { schemaFor } from "./schema-for.js";
import { declarations, type Declarations } from "./toolsets.js";

/** The wire format of `POST /v1/toolsets/:id/tools` (`save_tool`): a user tool checked, tested in the sandbox, then pinned by a derived toolset. */

/** A test case of a tool being saved: its input, and what it must return or fail with; mocks answer its host calls (nothing is sent). */
export interface ToolTestCase {
  readonly name?: string;
  readonly input: JsonValue;
  /** The output it must return (compared as canonical JSON). */
  readonly output?: JsonValue;
  /** The code of the error it must fail with: an engine code (limit_exceeded, refused, …), or the code of a ToolError the tool throws of its own (its failure is tool_error, the code kept in `details.thrown`). */
  readonly error?: string;
  /** What `fetch` answers, by URL and method (default GET). */
  readonly http?: readonly {
    readonly url: string;
    readonly method?: string;
    readonly status?: number;
    readonly headers?: Readonly<Record<string, string>>;
    /** The response body: a string as it is, or any other JSON value as its JSON text (with `content-type: application/json` unless `headers` give one). Default empty. */
    readonly body?: JsonValue;
  }[];
  /** What each granted tool answers, by `group.name`. */
  readonly tools?: { readonly [tool: string]: JsonValue };
}

export interface SaveToolRequest {
  /** A group of saved tools: a new one, or one that holds only tools saved before (never a group of the toolset's own tools). */
  readonly group: string;
  /** An identifier; saving the name of a tool saved before replaces it in the derived toolset (the toolset's own tools are never replaced). */
  readonly name: string;
  readonly description: string;
  /** TypeScript: the default export takes the input and returns the output. */
  readonly code: string;
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  /** What it may reach: `http`, `secrets`, `workspace`, `tools` (nothing unless granted). */
  readonly capabilities?: UserToolGrantsSpec;
  readonly limits?: UserToolLimitsSpec;
  readonly tests?: readonly ToolTestCase[];
}

const caseSchema = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 200 },
    input: anyJson,
    output: anyJson,
    error: { type: "string" },
    http: {
      type: "array",
      items: {
        type: "object",
        properties: {
          url: { type: "string" },
          method: { type: "string" },
          status: { type: "integer", minimum: 100, maximum: 599 },
          headers: { type: "object", additionalProperties: { type: "string" } },
          body: { ...anyJson, description: "A string as it is, or JSON (an object, an array…) answered as its JSON text with content-type application/json." },
        },
        required: ["url"],
        additionalProperties: false,
      },
    },
    tools: { type: "object" },
  },
  required: ["input"],
  additionalProperties: false,
} as const;

export const saveToolRequest = schemaFor<SaveToolRequest>()({
  type: "object",
  properties: {
    group: { type: "string", minLength: 1, maxLength: 64, description: "A group of user tools." },
    name: { type: "string", minLength: 1, maxLength: 64, description: "An identifier: scripts call `<group>.<name>(input)`." },
    description: { type: "string", minLength: 1, maxLength: 4000, description: "What the tool does, for the model that will call it." },
    code: { type: "string", minLength: 1, description: "TypeScript: the default export takes the input and returns the output." },
    inputSchema: { type: "object", description: "JSON Schema of its input (an object)." },
    outputSchema: { type: "object", description: "JSON Schema of its output." },
    capabilities: { type: "object", description: "Grants: http [{ host, pathPrefix, methods }], secrets [names], workspace ro|rw, tools [group.name]." },
    limits: { type: "object", description: "fuel, deadlineMs, memoryBytes, stackBytes, httpRequests, toolCalls, logLines, logLineChars." },
    tests: { type: "array", maxItems: 50, items: caseSchema, description: "Cases run in the sandbox before it is saved." },
  },
  required: ["group", "name", "description", "code", "inputSchema"],
  additionalProperties: false,
});

/** How one test case went. */
export interface ToolTestResult {
  readonly name: string;
  readonly ok: boolean;
  readonly got: JsonValue;
  /** What differed, for a failing case. */
  readonly problem?: string;
}

/**
 * What saving a tool answers (200): `id` and `declarations` when it was saved (the derived
 * toolset: start scripts on it to call the tool); otherwise `problems`, `diagnostics` and the
 * failing `tests` say what to fix, and nothing was saved.
 */
export interface SavedTool {
  readonly saved: boolean;
  readonly id?: string;
  readonly declarations?: Declarations;
  readonly problems: readonly string[];
  readonly diagnostics: readonly Diagnostic[];
  readonly tests: readonly ToolTestResult[];
}

export const savedTool = schemaFor<SavedTool>()({
  type: "object",
  properties: {
    saved: { type: "boolean" },
    id: { type: "string", description: "The derived toolset." },
    declarations,
    problems: { type: "array", items: { type: "string" } },
    diagnostics: { type: "array", items: diagnostic },
    tests: {
      type: "array",
      items: {
        type: "object",
        properties: { name: { type: "string" }, ok: { type: "boolean" }, got: anyJson, problem: { type: "string" } },
        required: ["name", "ok", "got"],
      },
    },
  },
  required: ["saved", "problems", "diagnostics", "tests"],
});
