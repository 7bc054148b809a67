import type { PinnedWorkflow } from "@tapedeck/protocol";
import { jsDoc, schemaToType } from "./schema-to-type.js";

/**
 * The declarations of the `workflows` global, for a toolset that pins workflows: a `.d.ts`
 * fragment (top-level, so the global exists only for such toolsets) and prompt lines. Each
 * workflow's input, output and signal payloads are typed from its JSON Schemas, so what
 * type-checks is what the engine accepts at run time.
 */

type Workflows = Readonly<Record<string, PinnedWorkflow>>;

/** Workflows sorted by name (code units): the same toolset gives the same text everywhere. */
function sorted(workflows: Workflows): [string, PinnedWorkflow][] {
  return Object.entries(workflows).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `declare const workflows: { … };`, or "" when there are none. */
export function renderWorkflowsTypescript(workflows: Workflows): string {
  const entries = sorted(workflows);
  if (entries.length === 0) return "";
  const members = entries.map(([name, workflow]) => renderWorkflow(name, workflow));
  return [
    jsDoc(
      [
        "Workflows this toolset pins. `start(input)` begins one as a child run of this run (once: a replay",
        "or a restart of this run does not start it again); `result()` waits for its output durably (this",
        'run may park meanwhile) and rejects with a ToolError "workflow_failed" if the child fails or is',
        "cancelled; `signal(id, name, payload)` sends a signal to a child this run started.",
      ].join("\n"),
      "",
    ),
    "declare const workflows: {",
    ...members,
    "};",
    "",
  ].join("\n");
}

function renderWorkflow(name: string, workflow: PinnedWorkflow): string {
  const indent = "    ";
  const input = schemaToType(workflow.input, { style: "ts", indent });
  const output = schemaToType(workflow.output, { style: "ts", indent });
  const signals = Object.entries(workflow.signals ?? {}).map(([signal, schema]) =>
    [
      jsDoc(`Sends the signal "${signal}" to the run \`id\` of this workflow (one this run started): its \`signal("${signal}")\` gets \`payload\`.`, indent),
      `${indent}signal(id: string, name: ${JSON.stringify(signal)}, payload: ${schemaToType(schema, { style: "ts", indent })}): Promise<void>;`,
    ].join("\n"),
  );
  return [
    jsDoc(workflow.description, "  "),
    `  readonly ${name}: {`,
    jsDoc("Starts the workflow as a child run of this run; `result()` waits for its output.", indent),
    `${indent}start(input: ${input}): Promise<{ readonly id: string; result(): Promise<${output}> }>;`,
    ...signals,
    "  };",
  ].join("\n");
}

/** One prompt line per workflow (`start`), and one per signal it takes. */
export function workflowPromptLines(workflows: Workflows, summarize: (description: string) => string): string[] {
  return sorted(workflows).flatMap(([name, workflow]) => {
    const input = schemaToType(workflow.input, { style: "prompt" });
    const output = schemaToType(workflow.output, { style: "prompt" });
    const summary = summarize(workflow.description);
    const start = `workflows.${name}.start(${input}) → { id, result() → ${output} }${summary === "" ? "" : ` · ${summary}`}`;
    const signals = Object.entries(workflow.signals ?? {}).map(
      ([signal, schema]) =>
        `workflows.${name}.signal(id, ${JSON.stringify(signal)}, ${schemaToType(schema, { style: "prompt" })}) · Sends it to a run of ${name} this run started.`,
    );
    return [start, ...signals];
  });
}
