import type { JsonObject } from "@tapedeck/protocol";

/**
 * Direct mode's own tools, which the model gets next to the toolset's: `tool_find` (lazy tools)
 * and `fetch_blob` (spilled results). Their names are reserved: no toolset tool takes them
 * (`model-name-table.ts`).
 */

/** A tool as any model API is given it: a name, a description, a JSON Schema of its input. */
export interface ModelToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
}

export const TOOL_FIND = "tool_find";
export const FETCH_BLOB = "fetch_blob";
export const OWN_TOOL_NAMES = [TOOL_FIND, FETCH_BLOB] as const;

/** At most this many definitions per `tool_find` call (seed 002): enough for a task, small enough not to undo the saving. */
export const TOOL_FIND_MAX = 20;

export const TOOL_FIND_INPUT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    names: {
      type: "array",
      items: { type: "string" },
      maxItems: TOOL_FIND_MAX,
      description: `Exact names of tools to load, from the list (at most ${TOOL_FIND_MAX}).`,
    },
    query: { type: "string", description: 'What you need, in words, e.g. "send a message to a slack channel": loads the best matching tools.' },
  },
  additionalProperties: false,
};

export const FETCH_BLOB_DEFINITION: ModelToolDefinition = {
  name: FETCH_BLOB,
  description:
    "Reads a tool result that was too large to show whole. Give the handle from the result's preview and the character offset to read from (0 for the start); each page says the offset of the next one.",
  inputSchema: {
    type: "object",
    properties: {
      handle: { type: "string", description: "The handle the preview gave, blob_…" },
      offset: { type: "integer", minimum: 0, description: "Character offset to read from; 0 for the start." },
    },
    required: ["handle"],
    additionalProperties: false,
  },
};
