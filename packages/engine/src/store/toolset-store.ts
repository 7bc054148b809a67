import type { JsonSchema, PinnedToolset } from "@tapedeck/protocol";

/**
 * A scope a toolset belongs to: the namespace (when set) and labels of the key or token that
 * registered it. A toolset's owners are a set: its id is a hash of its content, so two tenants
 * who register the same content get the same id, and each is an owner (each holds the content).
 * Who may see a toolset of given owners is the server's rule (`tenancy/toolset-access.ts`).
 */
export interface ToolsetOwner {
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * The toolsets sub-store: pinned toolsets (content-addressed, never changed once saved), their
 * owners, and the result shapes observed for their tools without an output schema. Contract:
 * `contracts/toolset-store-contract.ts`.
 */
export interface ToolsetStore {
  /**
   * Saves a toolset; saving the same id again leaves it as it is. `owner` is recorded when the
   * toolset is saved for the first time, and added to its owners when it already has some; a
   * toolset first saved without an owner (before owners were kept, or by the engine's own callers)
   * keeps none, whoever saves it again.
   */
  putToolset(toolset: PinnedToolset, owner?: ToolsetOwner): Promise<void>;
  getToolset(id: string): Promise<PinnedToolset | undefined>;
  /** The toolset's owners, each once, in the order they were added; empty for an unknown id or a toolset without owners. */
  getToolsetOwners(id: string): Promise<readonly ToolsetOwner[]>;

  /** Saves the observed result shape of a toolset's tool (`group.name`), replacing the last one. */
  putObservedShape(toolsetId: string, tool: string, shape: JsonSchema): Promise<void>;
  /** The observed result shapes of a toolset's tools, by `group.name`. */
  getObservedShapes(toolsetId: string): Promise<Record<string, JsonSchema>>;
}
