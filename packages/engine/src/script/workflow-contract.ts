import ts from "typescript";
import { scriptDiagnostic, type Diagnostic } from "./diagnostic.js";

/**
 * A workflow's contract with whoever starts it: its default export takes the input and returns
 * the output (or a promise of it), typed from the workflow's JSON Schemas. The checker proves it
 * by type-checking a small module beside the script that imports the script's default export
 * and assigns it to that function type; its errors are reported at the script's `export
 * default`, worded for the model.
 */

/** The TypeScript types of a workflow's input and output (from its schemas, `schemaToType`). */
export interface WorkflowContract {
  readonly input: string;
  readonly output: string;
}

/** Where the contract module lives in the checker's in-memory file system. */
export const CONTRACT_PATH = "/workflow-contract.ts";
/** What the contract module imports: the script. */
export const CONTRACT_IMPORT = "./script";

/** Code of a diagnostic that says the script breaks its contract. */
export const CONTRACT_CODE = "workflow-contract";

/** Types longer than this are cut in messages: the model has the schemas it wrote. */
const TYPE_IN_MESSAGE_MAX = 300;

export function contractSource(contract: WorkflowContract): string {
  return [
    `import workflow from ${JSON.stringify(CONTRACT_IMPORT)};`,
    `type Input = ${contract.input};`,
    `type Output = ${contract.output};`,
    "type Entry = typeof workflow;",
    // A function must accept the input (one that ignores it is fine); a value is the output itself, as in a run.
    "const takes: Entry extends (...args: never[]) => unknown ? (input: Input) => unknown : Entry = workflow;",
    "declare const returned: Entry extends (...args: never[]) => infer R ? Awaited<R> : Awaited<Entry>;",
    "const gives: Output = returned;",
    "export { takes, gives };",
    "",
  ].join("\n");
}

/** Lines of the contract module (0-based) whose errors say the input, or the output, does not fit. */
const TAKES_LINE = 4;
const GIVES_LINE = 6;

/** The contract module's errors, as diagnostics of the script at its default export. */
export function contractDiagnostics(program: ts.Program, script: ts.SourceFile, contract: WorkflowContract): Diagnostic[] {
  const file = program.getSourceFile(CONTRACT_PATH);
  if (file === undefined) return [];
  const found = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  if (found.length === 0) return [];
  const at = defaultExportStart(script);
  const types = `Input = ${cut(contract.input)} (from the input schema), Output = ${cut(contract.output)} (from the output schema)`;
  if (at === undefined) {
    return [
      scriptDiagnostic(
        script,
        0,
        CONTRACT_CODE,
        "error",
        `A workflow must default-export a function of its input: export default async (input: Input): Promise<Output> => …, with ${types}. The script has no default export.`,
      ),
    ];
  }
  return found.map((d) => {
    const line = d.start === undefined ? -1 : file.getLineAndCharacterOfPosition(d.start).line;
    const what = line === TAKES_LINE ? "take its input" : line === GIVES_LINE ? "return its output" : "take its input and return its output";
    const problem = ts.flattenDiagnosticMessageText(d.messageText, " ").replace(/\s+/g, " ");
    return scriptDiagnostic(
      script,
      at,
      CONTRACT_CODE,
      "error",
      `The workflow's default export must ${what}: export default async (input: Input): Promise<Output> => …, with ${types}. ${problem}`,
    );
  });
}
/** Where the script's default export starts (`export default …` or `export default function`), if it has one. */
function defaultExportStart(script: ts.SourceFile): number | undefined {
  for (const statement of script.statements) {
    if (ts.isExportAssignment(statement) && !statement.isExportEquals) return statement.getStart(script);
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) return statement.getStart(script);
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      const named = statement.exportClause.elements.find((e) => e.name.text === "default");
      if (named) return named.getStart(script);
    }
  }
  return undefined;
}

/** A type on one line, without its doc comments, cut to `TYPE_IN_MESSAGE_MAX`. */
function cut(type: string): string {
  const flat = type.replace(/\/\*\*[\s\S]*?\*\//g, "").replace(/\s+/g, " ");
  return flat.length <= TYPE_IN_MESSAGE_MAX ? flat : `${flat.slice(0, TYPE_IN_MESSAGE_MAX - 1)}…`;
}
