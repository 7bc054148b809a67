import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import type { DirectBinding } from "./direct-binding.js";

/**
 * What changed between a session's previous binding and its new one, and the note the model
 * reads about it (`tools.note`): the tools added, the tools removed, the tools whose definition
 * changed, each by the name the model calls it. Without a previous binding, or when the tools
 * are the same, there is no note: the model is told only when its hands changed.
 *
 * Invariant: the note names exactly the tools of the diff, every one, and no other (a property
 * test parses it back); model names have no spaces or commas, so its lists are unambiguous.
 */

export interface BindingDiff {
  /** Model names of the tools only the new binding has, sorted. */
  readonly added: readonly string[];
  /** Model names of the tools only the previous binding had, sorted. */
  readonly removed: readonly string[];
  /** Model names of the tools both have with different definitions, sorted. */
  readonly changed: readonly string[];
  /** Parts of the configuration that differ, for a `config_mismatch` message. */
  readonly sections: readonly BindingSection[];
}

export type BindingSection = "toolset" | "tools" | "approval" | "lazy" | "results" | "errorEnvelope";

export function diffBindings(previous: DirectBinding, next: DirectBinding): BindingDiff {
  const before = new Map(previous.tools.map((t) => [t.name, t]));
  const after = new Map(next.tools.map((t) => [t.name, t]));
  const added = [...after.keys()].filter((name) => !before.has(name)).sort();
  const removed = [...before.keys()].filter((name) => !after.has(name)).sort();
  const changed = [...after.keys()].filter((name) => before.has(name) && before.get(name)!.digest !== after.get(name)!.digest).sort();
  const sections: BindingSection[] = [];
  if (previous.toolset !== next.toolset) sections.push("toolset");
  // Lazy flags and budgets are compared for the tools both have: an added tool is a tools change only.
  const common = [...after.keys()].filter((name) => before.has(name));
  const lazyMoved = common.some((name) => (before.get(name)!.lazy ?? false) !== (after.get(name)!.lazy ?? false));
  if (added.length + removed.length + changed.length > 0 || lazyMoved) sections.push("tools");
  if (differs(previous.approval, next.approval)) sections.push("approval");
  if (differs(previous.lazy, next.lazy)) sections.push("lazy");
  const budget = (t: { maxTokens?: number; overflow?: string }) => `${t.maxTokens}/${t.overflow}`;
  if (common.some((name) => budget(before.get(name)!) !== budget(after.get(name)!))) sections.push("results");
  if (differs(previous.errorEnvelope, next.errorEnvelope)) sections.push("errorEnvelope");
  return { added, removed, changed, sections };
}

/** The model's note about `diff`, or `undefined` when no tool was added, removed or changed. */
export function bindingNote(diff: BindingDiff): string | undefined {
  if (diff.added.length + diff.removed.length + diff.changed.length === 0) return undefined;
  const lines = ["Your tools changed since the previous turn of this session."];
  if (diff.added.length > 0) lines.push(`Added: ${diff.added.join(", ")}.`);
  if (diff.removed.length > 0) lines.push(`Removed: ${diff.removed.join(", ")}. Calling them now fails: use the tools you have.`);
  if (diff.changed.length > 0) lines.push(`Changed: ${diff.changed.join(", ")}. Read their definitions again before calling them.`);
  return lines.join("\n");
}

/** The note for a session whose previous binding was `previous` (none: a new session, no note). */
export function noteForBinding(previous: DirectBinding | undefined, next: DirectBinding): string | undefined {
  return previous === undefined ? undefined : bindingNote(diffBindings(previous, next));
}

function differs(a: unknown, b: unknown): boolean {
  return canonicalJson(a as JsonValue) !== canonicalJson(b as JsonValue);
}
