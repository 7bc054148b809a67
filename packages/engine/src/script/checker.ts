import ts from "typescript";
import { checkResult, fromTsDiagnostic, internalDiagnostic, scriptDiagnostic, type CheckResult, type Diagnostic } from "./diagnostic.js";
import { isScriptLibFile, LIB_DIRECTORY, libSourceFile, SCRIPT_LIB_FILES } from "./lib-files.js";
import { sandboxGlobals } from "./sandbox-globals.js";
import { findRuleViolations, REPLACES_TS_DIAGNOSTICS, type RuleViolation } from "./script-rules.js";
import { CONTRACT_IMPORT, CONTRACT_PATH, contractDiagnostics, contractSource, type WorkflowContract } from "./workflow-contract.js";

/**
 * Type-checks a model's script against the generated `tapedeck:tools` declarations and what the
 * sandbox provides, fast enough to run on every submission.
 *
 * Invariants:
 * - Only the script's problems are reported with a position; a problem in the declarations or
 *   the globals is an `internal` error (a Tapedeck bug, not the model's), with line 0.
 * - No file outside the script lib list, the declarations and the globals is ever read: no
 *   `node_modules`, no DOM lib, no `@types`, whatever the script references.
 * - Speed comes from three caches: lib files parsed once per process (`lib-files.ts`), the
 *   declarations parsed once per id, and the previous Program handed to the next as
 *   `oldProgram`, so TypeScript reuses its structure and only the script is re-parsed.
 */

/** The `tapedeck:tools` declarations. The same `id` must always come with the same `text`. */
export interface ScriptDeclarations {
  /** Stable identity of `text` (e.g. its hash): the cache key. */
  readonly id: string;
  /** An ambient `declare module "tapedeck:tools" { … }`. */
  readonly text: string;
}

export interface CheckOptions {
  /** Declarations of globals added by enabled features (see `sandboxGlobals`). Default none. */
  readonly extraGlobals?: readonly string[];
  /** For a workflow: its default export must take this input and return this output (see `workflow-contract.ts`). Default none. */
  readonly workflow?: WorkflowContract;
}

/**
 * Declarations files kept parsed per checker. A process serves a handful of active toolsets;
 * past that an old one is parsed again (milliseconds), which beats holding every toolset.
 */
const DECLARATIONS_CACHE_SIZE = 8;

const SCRIPT_PATH = "/script.ts";
const DECLARATIONS_PATH = "/tapedeck-tools.d.ts";
const GLOBALS_PATH = "/sandbox-globals.d.ts";
const ROOT_NAMES = [SCRIPT_PATH, DECLARATIONS_PATH, GLOBALS_PATH];

/** One object for every program: `oldProgram` reuse compares options. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  // A script without import or export is still a module: its names never clash with globals.
  moduleDetection: ts.ModuleDetectionKind.Force,
  // The script is compiled alone by `transpileModule`: reject what that cannot compile.
  isolatedModules: true,
  lib: [...SCRIPT_LIB_FILES],
  types: [],
  noEmit: true,
  skipDefaultLibCheck: true,
  // Otherwise TypeScript looks for `@typescript/lib-*` packages on disk for every lib file.
  libReplacement: false,
};

/** A parsed file we generate, and its own problems once computed (they are all internal). */
interface GeneratedFile {
  readonly file: ts.SourceFile;
  diagnostics?: readonly Diagnostic[];
}

export class ScriptChecker {
  #previous: ts.Program | undefined;
  readonly #declarations = new Map<string, GeneratedFile>();
  readonly #globals = new Map<string, GeneratedFile>();

  /**
   * Checks `source`. Never throws for anything in the script or the declarations: every problem
   * is a diagnostic, and `ok` is false when any is an error.
   */
  check(source: string, declarations: ScriptDeclarations, options: CheckOptions = {}): CheckResult {
    const globalsText = sandboxGlobals(options.extraGlobals);
    const contract = options.workflow;
    let declarationsFile: GeneratedFile | undefined;
    let globalsFile: GeneratedFile | undefined;
    const host = createHost(contract !== undefined, (path, parse) => {
      if (path === SCRIPT_PATH) return parse(source);
      if (path === CONTRACT_PATH && contract !== undefined) return parse(contractSource(contract));
      if (path === DECLARATIONS_PATH) {
        declarationsFile = remember(this.#declarations, declarations.id, DECLARATIONS_CACHE_SIZE, () => ({
          file: parse(declarations.text),
        }));
        return declarationsFile.file;
      }
      if (path === GLOBALS_PATH) {
        globalsFile = remember(this.#globals, globalsText, DECLARATIONS_CACHE_SIZE, () => ({ file: parse(globalsText) }));
        return globalsFile.file;
      }
      return undefined;
    });
    const rootNames = contract === undefined ? ROOT_NAMES : [...ROOT_NAMES, CONTRACT_PATH];
    const program = ts.createProgram({ rootNames, options: COMPILER_OPTIONS, host, oldProgram: this.#previous });
    this.#previous = program;
    const script = program.getSourceFile(SCRIPT_PATH);
    if (script === undefined) throw new Error("the script file was not created"); // a bug in the host above
    const own = scriptDiagnostics(program, script);
    // A script with syntax errors has no reliable default export to judge.
    const syntaxOk = program.getSyntacticDiagnostics(script).length === 0;
    return checkResult([
      ...internalDiagnostics(program, [
        [declarationsFile, "tapedeck:tools declarations"],
        [globalsFile, "sandbox globals"],
      ]),
      ...own,
      ...(contract !== undefined && syntaxOk ? contractDiagnostics(program, script, contract) : []),
    ]);
  }
}

type Parse = (text: string) => ts.SourceFile;

/**
 * A compiler host over our three in-memory files (four with a workflow's contract, which alone
 * may import the script) and the cached lib files, nothing else.
 */
function createHost(withContract: boolean, getFile: (path: string, parse: Parse) => ts.SourceFile | undefined): ts.CompilerHost {
  const notResolved = <T>(names: readonly unknown[]): T[] => names.map(() => ({}) as T);
  const script: ts.ResolvedModuleWithFailedLookupLocations = {
    resolvedModule: { resolvedFileName: SCRIPT_PATH, extension: ts.Extension.Ts, isExternalLibraryImport: false },
  };
  return {
    getSourceFile: (path, languageVersionOrOptions) => {
      const options: ts.CreateSourceFileOptions =
        typeof languageVersionOrOptions === "object" ? languageVersionOrOptions : { languageVersion: languageVersionOrOptions };
      return libSourceFile(path, options) ?? getFile(path, (text) => ts.createSourceFile(path, text, options));
    },
    // The script's imports are never resolved to files: `tapedeck:tools` is an ambient module.
    resolveModuleNameLiterals: (literals, containingFile) =>
      withContract && containingFile === CONTRACT_PATH
        ? literals.map((literal) => (literal.text === CONTRACT_IMPORT ? script : ({} as ts.ResolvedModuleWithFailedLookupLocations)))
        : notResolved<ts.ResolvedModuleWithFailedLookupLocations>(literals),
    resolveTypeReferenceDirectiveReferences: (references) => notResolved<ts.ResolvedTypeReferenceDirectiveWithFailedLookupLocations>(references),
    // Script types never need JSDoc; skipping it makes parsing the libs faster.
    jsDocParsingMode: ts.JSDocParsingMode.ParseForTypeErrors,
    getDefaultLibFileName: () => `${LIB_DIRECTORY}/lib.es5.d.ts`,
    getDefaultLibLocation: () => LIB_DIRECTORY,
    fileExists: (path) => ROOT_NAMES.includes(path) || (withContract && path === CONTRACT_PATH) || isScriptLibFile(path),
    readFile: () => undefined,
    writeFile: () => undefined,
    getCurrentDirectory: () => "/",
    getCanonicalFileName: (path) => path,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => "\n",
  };
}

/** The script's own problems: syntax first (alone, since types after a syntax error mislead). */
function scriptDiagnostics(program: ts.Program, script: ts.SourceFile): Diagnostic[] {
  const syntax = program.getSyntacticDiagnostics(script);
  if (syntax.length > 0) return syntax.map((d) => fromTsDiagnostic(script, d));
  const semantic = program.getSemanticDiagnostics(script);
  const violations = findRuleViolations(script, program.getTypeChecker(), (f) => program.isSourceFileDefaultLibrary(f));
  const replacing = violations.filter((v) => REPLACES_TS_DIAGNOSTICS.has(v.code));
  const fromTs = semantic
    .filter((d) => !replacing.some((v) => d.start !== undefined && d.start >= v.start && d.start < v.end))
    .map((d) => fromTsDiagnostic(script, d));
  const fromRules = violations.map((v: RuleViolation) => scriptDiagnostic(script, v.start, v.code, "error", v.message));
  return [...fromRules, ...fromTs].sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * Problems outside the script. A generated file's are computed the first time it is seen and
 * kept with it; option and global problems come from this program (they are cheap).
 */
function internalDiagnostics(program: ts.Program, files: ReadonlyArray<readonly [GeneratedFile | undefined, string]>): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const [generated, label] of files) {
    if (generated === undefined) continue;
    generated.diagnostics ??= [...program.getSyntacticDiagnostics(generated.file), ...program.getSemanticDiagnostics(generated.file)].map((d) =>
      internalDiagnostic(d, label),
    );
    found.push(...generated.diagnostics);
  }
  for (const d of [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]) {
    found.push(internalDiagnostic(d, d.file?.fileName ?? "compiler options"));
  }
  return found;
}

/** `map.get(key)`, or a new value stored under it; the least recently used goes past `limit`. */
function remember<V>(map: Map<string, V>, key: string, limit: number, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) value = create();
  else map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= limit) break;
    map.delete(oldest);
  }
  return value;
}
