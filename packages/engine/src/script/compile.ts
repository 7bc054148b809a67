import { GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, originalPositionFor, TraceMap } from "@jridgewell/trace-mapping";
import ts from "typescript";

/**
 * Turns a checked script into the JavaScript the sandbox runs, and maps the sandbox's error
 * positions back to the lines the model wrote. Type-only lines (interfaces, type aliases,
 * `import type`) vanish in the JavaScript, so without the map every later line would be off.
 */

export interface CompiledScript {
  /** ES2022 JavaScript, still an ES module, without a `sourceMappingURL` comment. */
  readonly js: string;
  /** The source map (JSON text) from `script.js` back to `script.ts`. */
  readonly sourceMap: string;
}

/** A 1-based line and column. */
export interface Position {
  readonly line: number;
  readonly column: number;
}

/** Maps a position in the JavaScript to the TypeScript; undefined when it has no mapping. */
export type PositionMapper = (line: number, column: number) => Position | undefined;

const COMPILE_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  sourceMap: true,
};

const SOURCE_MAPPING_URL = /\n?\/\/# sourceMappingURL=\S*\s*$/;

/**
 * Transpiles `source` without type-checking it (check it first with `ScriptChecker`). Throws
 * only if TypeScript produces no source map, which would be a bug.
 */
export function compileScript(source: string): CompiledScript {
  const out = ts.transpileModule(source, { compilerOptions: COMPILE_OPTIONS, fileName: "script.ts" });
  if (out.sourceMapText === undefined) throw new Error("TypeScript produced no source map");
  return { js: out.outputText.replace(SOURCE_MAPPING_URL, "\n"), sourceMap: out.sourceMapText };
}

/**
 * A mapper over `sourceMap`. A position between two mapped tokens maps like the token before
 * it; a column before the first token of its line (or no column at all, as 1) maps like the
 * line's first token.
 */
export function createPositionMapper(sourceMap: string): PositionMapper {
  const map = new TraceMap(sourceMap);
  return (line, column) => {
    const needle = { line, column: Math.max(0, column - 1) };
    let found = originalPositionFor(map, { ...needle, bias: GREATEST_LOWER_BOUND });
    if (found.line === null) found = originalPositionFor(map, { ...needle, bias: LEAST_UPPER_BOUND });
    return found.line === null ? undefined : { line: found.line, column: found.column + 1 };
  };
}

/**
 * Rewrites each `script.js:LINE:COL` (or `script.js:LINE`) in `stack` to the TypeScript
 * position, as `script.ts:LINE:COL` (or `script.ts:LINE`: a line alone gives no real column).
 * QuickJS frames look like `    at f (script.js:3:20)`. Positions without a mapping are left
 * as they are.
 */
export function mapStack(stack: string, mapper: PositionMapper, filename = "script.js"): string {
  const tsName = filename.replace(/\.js$/, ".ts");
  // Not preceded by a name character, so `myscript.js` is not taken for `script.js`.
  const frame = new RegExp(`(?<![\\w.-])${escapeRegExp(filename)}:(\\d+)(?::(\\d+))?`, "g");
  return stack.replace(frame, (whole, line: string, column: string | undefined) => {
    const mapped = mapper(Number(line), column === undefined ? 1 : Number(column));
    if (mapped === undefined) return whole;
    return column === undefined ? `${tsName}:${mapped.line}` : `${tsName}:${mapped.line}:${mapped.column}`;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
