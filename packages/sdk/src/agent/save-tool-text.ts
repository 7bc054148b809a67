/**
 * `save_tool`'s answers, for the model: a saved tool with the declaration scripts call it by;
 * a refused one with everything to fix at once — each problem, the code's diagnostics (line,
 * code frame), each failing test case with what differed; grants beyond what the agent may give.
 */
import type { SavedTool } from "@tapedeck/protocol/api";
import { diagnosticsText } from "./diagnostics-text.js";
import type { ModelText } from "./model-text.js";

export function savedToolText(group: string, name: string, saved: SavedTool): ModelText {
  const path = `${group}.${name}`;
  if (!saved.saved) {
    const failing = saved.tests.filter((test) => !test.ok);
    const parts = [
      `The tool ${path} was not saved. Fix these problems and call save_tool again.`,
      ...saved.problems.map((problem) => `- ${problem}`),
      ...(saved.diagnostics.length === 0 ? [] : ["", diagnosticsText(saved.diagnostics)]),
      ...(failing.length === 0
        ? []
        : ["", `Failing test cases (${failing.length} of ${saved.tests.length}):`, ...failing.map((test) => `- ${test.name}: ${test.problem ?? "failed"}`)]),
    ];
    return { text: parts.join("\n"), isError: true };
  }
  const lines = (saved.declarations?.prompt ?? "").split("\n").filter((line) => line.startsWith(`${path}(`) || line.startsWith(`${path} `));
  const tests = saved.tests.length === 0 ? "no test cases were given" : `${saved.tests.length} test case${saved.tests.length === 1 ? "" : "s"} passed`;
  return {
    text: [
      `Saved the tool ${path} (${tests}). Scripts you run from now on can call it:`,
      ...lines,
      `import { ${group} } from "tapedeck:tools"; … await ${path}(input)`,
    ].join("\n"),
    isError: false,
  };
}

export function beyondText(group: string, name: string, beyond: readonly string[], declined: boolean): ModelText {
  const what = beyond.join("; ");
  return {
    text: declined
      ? `A human declined to let ${group}.${name} have ${what}. Nothing was saved. Give it only what the task needs, or tell the user why it needs these.`
      : `${group}.${name} asks for more than this agent may grant its tools without a human's approval: ${what}. Nothing was saved. Narrow its capabilities to what the task needs (a host, a path prefix, GET), or ask the user to allow these.`,
    isError: true,
  };
}
