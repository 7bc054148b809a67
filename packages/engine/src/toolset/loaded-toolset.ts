import type { PinnedTool, PinnedWorkflow, RunBudget } from "@tapedeck/protocol";
import type { SandboxFeature } from "../sandbox/sandbox.js";
import type { SchemaValidator } from "../util/schema-validator.js";
import type { ArgsRedaction } from "./redacted-args.js";

/** The toolset of a run, with what executing it needs (loaded once per engine and toolset). */
export interface LoadedToolset {
  readonly id: string;
  readonly byPath: ReadonlyMap<string, PinnedTool>;
  /** group → tool names, for the sandbox's `tapedeck:tools` module (built-ins are not in it). */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Globals the toolset enables (`fetch` for `http`); see `toolset/script-features.ts`. */
  readonly features: readonly SandboxFeature[];
  readonly validator: SchemaValidator;
  /** The workflows the toolset pins, by name (the `workflows` global). */
  readonly workflows: Readonly<Record<string, PinnedWorkflow>>;
  /** Redacts its tools' `sensitiveParams` with the engine's key; absent (a toolset loaded outside an engine): a key of the process's own. */
  readonly sensitive?: ArgsRedaction;
  /** Each run's budget, as the toolset pins it (under a start's own). */
  readonly budget?: RunBudget;
}
