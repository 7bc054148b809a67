import type { JsonSchema, PinnedToolset } from "@tapedeck/protocol";

/**
 * The toolsets sub-store: pinned toolsets (content-addressed, never changed once saved) and
 * the result shapes observed for their tools without an output schema. Contract:
 * `contracts/toolset-store-contract.ts`.
 */
export interface ToolsetStore {
  /** Saves a toolset; saving the same id again is a no-op. */
  putToolset(toolset: PinnedToolset): Promise<void>;
  getToolset(id: string): Promise<PinnedToolset | undefined>;

  /** Saves the observed result shape of a toolset's tool (`group.name`), replacing the last one. */
  putObservedShape(toolsetId: string, tool: string, shape: JsonSchema): Promise<void>;
  /** The observed result shapes of a toolset's tools, by `group.name`. */
  getObservedShapes(toolsetId: string): Promise<Record<string, JsonSchema>>;
}
