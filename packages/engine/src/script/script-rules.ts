import ts from "typescript";

/**
 * Rules TypeScript's checker cannot express because they are about the sandbox, not types:
 * what a script may import, declare and reference. Each violation would pass a plain type
 * check and fail at run time, so it is reported at check time with text the model can act on.
 */

/** The only module a script may import. */
export const TOOLS_MODULE = "tapedeck:tools";

export const RULE_CODES = {
  /** An import of any module other than `tapedeck:tools`. */
  forbiddenImport: "forbidden-import",
  /** A `/// <reference …>` directive: it would pull in a lib, types or a file the sandbox lacks. */
  forbiddenReference: "forbidden-reference",
  /** A `declare …` value or module: it would describe something the sandbox does not have. */
  ambientDeclaration: "ambient-declaration",
  /** A built-in that the ES lib declares but the sandbox lacks (`Intl`). */
  unavailableGlobal: "unavailable-global",
} as const;

export interface RuleViolation {
  readonly code: (typeof RULE_CODES)[keyof typeof RULE_CODES];
  /** Offsets in the script's text. */
  readonly start: number;
  readonly end: number;
  readonly message: string;
}

/** Violations that stand in for TypeScript's own error at the same place ("Cannot find module…"). */
export const REPLACES_TS_DIAGNOSTICS: ReadonlySet<string> = new Set([RULE_CODES.forbiddenImport, RULE_CODES.forbiddenReference]);

/**
 * Globals the ES2023 lib declares as values but QuickJS does not provide. `Intl` cannot be
 * left out of the lib like `WeakRef`, because `lib.es5.d.ts` itself declares it.
 */
const UNAVAILABLE_GLOBALS: ReadonlyMap<string, string> = new Map([
  ["Intl", "`Intl` is not available in the sandbox. Format numbers and dates by hand (`toFixed`, `toISOString`)."],
]);

/**
 * Finds every violation in `file`. `isLibFile` tells a built-in's declaration apart from the
 * script's own (a local `const Intl = …` is fine).
 */
export function findRuleViolations(file: ts.SourceFile, checker: ts.TypeChecker, isLibFile: (declaration: ts.SourceFile) => boolean): RuleViolation[] {
  const found: RuleViolation[] = referenceViolations(file);
  for (const statement of file.statements) {
    const ambient = ambientViolation(statement, file);
    if (ambient !== undefined) found.push(ambient);
  }
  const visit = (node: ts.Node, parent: ts.Node | undefined): void => {
    const specifier = importedSpecifier(node);
    if (specifier !== undefined) {
      const violation = importViolation(specifier, file);
      if (violation !== undefined) found.push(violation);
    }
    if (ts.isIdentifier(node) && parent !== undefined) {
      const violation = globalViolation(node, parent, file, checker, isLibFile);
      if (violation !== undefined) found.push(violation);
    }
    ts.forEachChild(node, (child) => visit(child, node));
  };
  visit(file, undefined);
  return found;
}

/** The module specifier of an import or re-export of any form, static, dynamic or in a type. */
function importedSpecifier(node: ts.Node): ts.Expression | undefined {
  if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return node.moduleSpecifier;
  if (ts.isExternalModuleReference(node)) return node.expression;
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    return node.arguments[0] ?? node;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) return node.argument.literal;
  return undefined;
}

function importViolation(specifier: ts.Expression, file: ts.SourceFile): RuleViolation | undefined {
  const literal = ts.isStringLiteralLike(specifier);
  if (literal && specifier.text === TOOLS_MODULE) return undefined;
  const found = literal ? `found "${specifier.text}"` : "found a module name computed at run time";
  return {
    code: RULE_CODES.forbiddenImport,
    start: specifier.getStart(file),
    end: specifier.getEnd(),
    message: `Only "${TOOLS_MODULE}" can be imported: scripts run in a sandbox with no other modules (${found}).`,
  };
}

function referenceViolations(file: ts.SourceFile): RuleViolation[] {
  const references = [...file.libReferenceDirectives, ...file.typeReferenceDirectives, ...file.referencedFiles];
  return references.map((reference) => ({
    code: RULE_CODES.forbiddenReference,
    start: reference.pos,
    end: reference.end,
    message:
      `Scripts cannot use \`/// <reference …>\` (found "${reference.fileName}"): the sandbox has only the ` +
      `ES2023 built-ins, \`console\` and "${TOOLS_MODULE}".`,
  }));
}

function ambientViolation(statement: ts.Statement, file: ts.SourceFile): RuleViolation | undefined {
  // Ambient types are harmless (they are erased); ambient values and modules are lies.
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) return undefined;
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
  const declare = modifiers?.find((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
  if (declare === undefined) return undefined;
  return {
    code: RULE_CODES.ambientDeclaration,
    start: declare.getStart(file),
    end: declare.getEnd(),
    message:
      "Scripts cannot use `declare`: the sandbox has only the ES2023 built-ins, `console` and the " +
      `exports of "${TOOLS_MODULE}", so a declared value or module would not exist at run time.`,
  };
}

function globalViolation(
  id: ts.Identifier,
  parent: ts.Node,
  file: ts.SourceFile,
  checker: ts.TypeChecker,
  isLibFile: (declaration: ts.SourceFile) => boolean,
): RuleViolation | undefined {
  const message = UNAVAILABLE_GLOBALS.get(id.text);
  // Only a value reference fails at run time; `Intl.NumberFormatOptions` in a type is erased.
  if (message === undefined || ts.isQualifiedName(parent) || ts.isTypeQueryNode(parent)) return undefined;
  const declarations = checker.getSymbolAtLocation(id)?.declarations ?? [];
  if (declarations.length === 0 || !declarations.every((d) => isLibFile(d.getSourceFile()))) return undefined;
  return { code: RULE_CODES.unavailableGlobal, start: id.getStart(file), end: id.getEnd(), message };
}
