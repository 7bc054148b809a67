import type { Diagnostic } from "../diagnostic.js";
import { SEARCH_LIMIT } from "../tool-search.js";
import type { JsonSchema, PinnedToolset, ToolsetSpec } from "../toolset.js";
import { diagnostic } from "./diagnostic.js";
import { id, jsonSchema } from "./fields.js";
import { schemaFor } from "./schema-for.js";

/** The wire format of the toolset routes (`/v1/toolsets`): registering, reading, saving workflows, searching tools. */

/** The declarations of a toolset's `tapedeck:tools` module. */
export interface Declarations {
  /** A `.d.ts` module, for a type-checker. */
  readonly typescript: string;
  /** One line per tool, for the model's prompt. */
  readonly prompt: string;
}

export const declarations = schemaFor<Declarations>()({
  type: "object",
  properties: {
    typescript: { type: "string", description: "A .d.ts module for a type-checker." },
    prompt: { type: "string", description: "One line per tool, for a prompt." },
  },
  required: ["typescript", "prompt"],
});

/** `/v1/toolsets/:id/…`. */
export interface ToolsetParams {
  readonly id: string;
}

export const toolsetParams = schemaFor<ToolsetParams>()({
  type: "object",
  properties: { id: { ...id, description: "A toolset id (`ts_…`)." } },
  required: ["id"],
  additionalProperties: false,
});

/**
 * `POST /v1/toolsets`: the body is a `ToolsetSpec` (the toolset file of the README), without
 * `base`: the API does not derive toolsets from a body (saving a workflow derives one).
 */
export type CreateToolsetRequest = Omit<ToolsetSpec, "base">;

export const createToolsetRequest = schemaFor<CreateToolsetRequest>()({
  type: "object",
  properties: {
    mcpServers: { type: "object", description: "MCP servers by group." },
    hostTools: { type: "object", description: "Host tools by group, then name." },
    policies: { type: "object", description: "Policies by `group.name` or `group.*`." },
    http: { type: "object", description: 'The `http` built-in: `{ "allow": [host patterns] }`; scripts then have `fetch`.' },
    library: { type: "object", description: 'Groups of the built-in tool library with their options: `{ "time": {}, "files": { "mode": "rw" } }`.' },
    userTools: { type: "object", description: "Sandboxed user tools by group, then name: code, schemas, grants, limits." },
    budget: {
      type: "object",
      description:
        'Each run\'s budget on this toolset: `{ "maxCalls": 500, "maxCallsPerTool": { "github.search": 50 }, "maxResultBytes": 10485760, "maxChildRuns": 20 }`; past it the run fails `budget_exceeded`.',
    },
  },
  additionalProperties: false,
});

/** `POST /v1/toolsets` answers: the toolset's content address and its declarations. */
export interface RegisteredToolset {
  readonly id: string;
  readonly declarations: Declarations;
  /** Problems that did not stop the registration (an optional MCP server that could not be listed). */
  readonly warnings: readonly string[];
}

export const registeredToolset = schemaFor<RegisteredToolset>()({
  type: "object",
  properties: { id: { type: "string" }, declarations, warnings: { type: "array", items: { type: "string" } } },
  required: ["id", "declarations", "warnings"],
});

/** `GET /v1/toolsets/:id`. */
export interface ToolsetInfo {
  readonly id: string;
  /** What the toolset pins: every tool with its schemas and resolved policy. */
  readonly toolset: PinnedToolset;
  readonly declarations: Declarations;
}

export const toolsetInfo = schemaFor<ToolsetInfo>()({
  type: "object",
  properties: { id: { type: "string" }, toolset: { type: "object" }, declarations },
  required: ["id", "toolset", "declarations"],
});

/**
 * `POST /v1/toolsets/:id/workflows`: saves a workflow on the toolset `id`. The code is checked
 * against that toolset's declarations, and its default export against `input` and `output`.
 */
export interface SaveWorkflowRequest {
  /** An identifier (letters, digits, `_`; at most 64 characters): scripts call `workflows.<name>.start(input)`. Saving a name the toolset has replaces it. */
  readonly name: string;
  /** What it does, for whoever starts it. */
  readonly description: string;
  /** Its TypeScript: the default export takes the input and returns the output. */
  readonly code: string;
  /** JSON Schema of its input. */
  readonly input: JsonSchema;
  /** JSON Schema of its output. */
  readonly output: JsonSchema;
  /** Each signal it waits for (`signal(name)`), with the JSON Schema of its payload. */
  readonly signals?: { readonly [signal: string]: JsonSchema };
}

export const saveWorkflowRequest = schemaFor<SaveWorkflowRequest>()({
  type: "object",
  properties: {
    name: {
      type: "string",
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      maxLength: 64,
      description: "An identifier: scripts call `workflows.<name>.start(input)`.",
    },
    description: { type: "string", minLength: 1, maxLength: 4000, description: "What the workflow does, for whoever starts it." },
    code: { type: "string", minLength: 1, description: "Its TypeScript: the default export takes the input and returns the output." },
    input: { ...jsonSchema, description: "JSON Schema of its input." },
    output: { ...jsonSchema, description: "JSON Schema of its output." },
    signals: {
      type: "object",
      maxProperties: 32,
      propertyNames: { minLength: 1, maxLength: 64 },
      additionalProperties: jsonSchema,
      description: "Each signal it waits for, with the JSON Schema of its payload.",
    },
  },
  required: ["name", "description", "code", "input", "output"],
  additionalProperties: false,
});

/**
 * `POST /v1/toolsets/:id/workflows` answers 201: the toolset derived from `id` that pins the
 * workflow (a new id: start scripts on it to use `workflows.<name>`), and its declarations.
 */
export interface SavedWorkflow {
  readonly id: string;
  readonly declarations: Declarations;
  /** The type-checker's warnings (errors refuse the workflow: 422 `script_refused`). */
  readonly warnings: readonly Diagnostic[];
}

export const savedWorkflow = schemaFor<SavedWorkflow>()({
  type: "object",
  properties: { id: { type: "string", description: "The derived toolset." }, declarations, warnings: { type: "array", items: diagnostic } },
  required: ["id", "declarations", "warnings"],
});

/** Longest search query: a need takes a few words, and the search reads only the first 32 anyway. */
export const SEARCH_QUERY_MAX_LENGTH = 1000;

/** `GET /v1/toolsets/:id/search?q=…&limit=…`. */
export interface ToolSearchQuery {
  /** What to search for: words describing a need, or a tool's name. */
  readonly q: string;
  /** Hits at most. Default 5, at most 50 (`SEARCH_LIMIT`). */
  readonly limit?: number;
}

export const toolSearchQuery = schemaFor<ToolSearchQuery>()({
  type: "object",
  properties: {
    q: { type: "string", maxLength: SEARCH_QUERY_MAX_LENGTH, description: "What to search for." },
    limit: { type: "integer", minimum: 1, maximum: SEARCH_LIMIT.max, description: `Hits at most. Default ${SEARCH_LIMIT.default}.` },
  },
  required: ["q"],
  additionalProperties: false,
});

/** `GET /v1/toolsets/:id/search`. */
export interface ToolSearchResult {
  /** Best first; none when nothing matches. */
  readonly hits: readonly ToolSearchHit[];
}

export interface ToolSearchHit {
  /** `group.name`, as the journal names it. */
  readonly tool: string;
  /** What the script imports from `tapedeck:tools`. */
  readonly group: string;
  /** Relevance, higher is better; comparable only within one search. */
  readonly score: number;
  /** The tool's TypeScript declaration. */
  readonly declaration: string;
}

export const toolSearchResult = schemaFor<ToolSearchResult>()({
  type: "object",
  properties: {
    hits: {
      type: "array",
      items: {
        type: "object",
        properties: {
          tool: { type: "string", description: "`group.name`." },
          group: { type: "string" },
          score: { type: "number" },
          declaration: { type: "string" },
        },
        required: ["tool", "group", "score", "declaration"],
      },
    },
  },
  required: ["hits"],
});
