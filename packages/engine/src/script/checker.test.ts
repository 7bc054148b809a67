import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { ScriptChecker, type ScriptDeclarations } from "./checker.js";
import type { CheckResult, Diagnostic } from "./diagnostic.js";
import { LIB_DIRECTORY, SCRIPT_LIB_FILES } from "./lib-files.js";

const DECLARATIONS: ScriptDeclarations = {
  id: "github-v1",
  text: `declare module "tapedeck:tools" {
  export class ToolError extends Error {
    readonly code: string;
  }
  export const github: {
    /** Creates an issue. */
    createIssue(args: { repo: string; title: string; state?: "open" | "closed" }): Promise<{ number: number; url: string }>;
    listIssues(args: { repo: string }): Promise<Array<{ number: number; title: string }>>;
  };
}
`,
};

const checker = new ScriptChecker();
const check = (source: string, declarations = DECLARATIONS): CheckResult => checker.check(source, declarations);

/** The script's only error. */
function onlyError(result: CheckResult): Diagnostic {
  assert.equal(result.ok, false);
  assert.equal(result.diagnostics.length, 1, JSON.stringify(result.diagnostics, null, 2));
  const [d] = result.diagnostics;
  assert.ok(d !== undefined);
  return d;
}

/** A script calling `call` on line 4: `github` at column 10, the tool at 17. */
const callingOnLine4 = (call: string): string =>
  `import { github } from "tapedeck:tools";\n\nexport default async function () {\n  return github.${call};\n}\n`;

void describe("ScriptChecker", () => {
  void it("passes a correct script that uses tools, ToolError, console and ES2023", () => {
    const result = check(`import { github, ToolError } from "tapedeck:tools";

interface Input { repo: string }

export default async function (input: Input) {
  const issues = await github.listIssues({ repo: input.repo });
  console.log("found", issues.length);
  console.debug(issues.toSorted((a, b) => a.number - b.number).at(-1));
  try {
    return await github.createIssue({ repo: input.repo, title: "x", state: "open" });
  } catch (e) {
    if (e instanceof ToolError) console.warn(e.code);
    console.error(e);
    console.info(Object.hasOwn({}, "a"));
    return null;
  }
}
`);
    assert.deepEqual(result, { ok: true, diagnostics: [] });
  });

  void it("accepts `export default <value>` and a script with no import", () => {
    assert.equal(check("export default { answer: 42 };\n").ok, true);
  });

  void it("reports a wrong argument type at the property, with a frame", () => {
    const d = onlyError(check(callingOnLine4(`createIssue({ repo: 42, title: "x" })`)));
    assert.deepEqual([d.line, d.column, d.code, d.category], [4, 31, 2322, "error"]);
    assert.equal(d.message, "Type 'number' is not assignable to type 'string'.");
    assert.equal(
      d.frame,
      [
        "  2 |",
        "  3 | export default async function () {",
        '> 4 |   return github.createIssue({ repo: 42, title: "x" });',
        "    |                               ^",
        "  5 | }",
        "  6 |",
      ].join("\n"),
    );
  });

  void it("reports a missing property with the whole message chain", () => {
    const d = onlyError(check(callingOnLine4(`createIssue({ repo: "a" })`)));
    assert.deepEqual([d.line, d.column, d.code], [4, 29, 2345]);
    assert.match(d.message, /Property 'title' is missing/);
  });

  void it("reports an unknown tool at its name", () => {
    const d = onlyError(check(callingOnLine4(`deleteRepo({ repo: "a" })`)));
    assert.deepEqual([d.line, d.column, d.code], [4, 17, 2339]);
    assert.match(d.message, /Property 'deleteRepo' does not exist/);
  });

  void it("reports a value outside an enum", () => {
    const d = onlyError(check(callingOnLine4(`createIssue({ repo: "a", title: "t", state: "shut" })`)));
    assert.deepEqual([d.line, d.column], [4, 54]);
    assert.match(d.message, /'"shut"' is not assignable to type '"open" \| "closed" \| undefined'/);
  });

  void it("reports a syntax error alone", () => {
    const result = check("export default async function () {\n  const = 1;\n}\n");
    assert.equal(result.ok, false);
    assert.ok(result.diagnostics.length > 0);
    for (const d of result.diagnostics) assert.deepEqual([d.line, d.code], [2, 1134]);
  });

  void it("explains that only tapedeck:tools can be imported, at the specifier", () => {
    const d = onlyError(check(`import { readFileSync } from "fs";\nexport default readFileSync;\n`));
    assert.deepEqual([d.line, d.column, d.code], [1, 30, "forbidden-import"]);
    assert.equal(d.message, 'Only "tapedeck:tools" can be imported: scripts run in a sandbox with no other modules (found "fs").');
    const dynamic = onlyError(check(`export default async function () {\n  return import("node:child_process");\n}\n`));
    assert.deepEqual([dynamic.line, dynamic.column, dynamic.code], [2, 17, "forbidden-import"]);
  });

  void it("rejects WeakRef and FinalizationRegistry, which the sandbox removes", () => {
    for (const name of ["WeakRef", "FinalizationRegistry"]) {
      const d = onlyError(check(`export default typeof ${name};\n`));
      assert.deepEqual([d.line, d.column, d.category], [1, 23, "error"]);
      assert.match(d.message, /not deterministic/);
    }
  });

  void it("rejects globals the sandbox does not provide, unless a feature declares them", () => {
    for (const name of ["document", "setInterval", "fetch", "require", "process", "window"]) {
      const d = onlyError(check(`export default typeof ${name};\n`));
      assert.match(d.message, new RegExp(`Cannot find name '${name}'`));
      assert.doesNotMatch(d.message, /npm i|tsconfig|lib' compiler option/);
    }
    const extraGlobals = ["declare function fetch(url: string): Promise<unknown>;"];
    const withFetch = checker.check(`await fetch("https://example.com");\nexport default 1;\n`, DECLARATIONS, { extraGlobals });
    assert.deepEqual(withFetch, { ok: true, diagnostics: [] });
  });

  void it("rejects Intl, which the ES lib declares but QuickJS lacks, in values only", () => {
    const d = onlyError(check(`export default new Intl.NumberFormat("en").format(1);\n`));
    assert.deepEqual([d.line, d.column, d.code], [1, 20, "unavailable-global"]);
    const typeOnly = check(`const o: Intl.NumberFormatOptions = {};\nconst Intl2 = { Intl: 1 };\nexport default [o, Intl2.Intl];\n`);
    assert.deepEqual(typeOnly, { ok: true, diagnostics: [] });
  });

  void it("rejects declare, which would invent values the sandbox lacks", () => {
    const d = onlyError(check(`declare const secret: string;\nexport default secret;\n`));
    assert.deepEqual([d.line, d.column, d.code], [1, 1, "ambient-declaration"]);
  });

  void it("does not let a script pull in another lib", () => {
    const result = check(`/// <reference lib="dom" />\nexport default document.title;\n`);
    assert.deepEqual(
      result.diagnostics.map((d) => [d.line, d.column, d.code]),
      [
        [1, 21, "forbidden-reference"],
        [2, 16, 2584],
      ],
    );
  });

  void it("parses declarations once per id", () => {
    // Same id, different text: a checker that re-parsed would see `renamed` and reject the script.
    const own = new ScriptChecker();
    const script = callingOnLine4(`listIssues({ repo: "a" })`);
    assert.equal(own.check(script, DECLARATIONS).ok, true);
    const renamed = { id: DECLARATIONS.id, text: DECLARATIONS.text.replace("listIssues", "renamed") };
    assert.equal(own.check(script, renamed).ok, true);
    assert.equal(own.check(script, { ...renamed, id: "github-v2" }).ok, false);
  });

  void it("reports a broken declarations file as internal, not as the script's fault", () => {
    const broken = { id: "broken", text: `declare module "tapedeck:tools" {\n  export const x: Missing;\n}\n` };
    const result = check(`export default 1;\n`, broken);
    const d = onlyError(result);
    assert.deepEqual([d.line, d.column, d.code], [0, 0, "internal"]);
    assert.match(d.message, /tapedeck:tools declarations:2:19.*Cannot find name 'Missing'.*Tapedeck bug/);
  });
});

void describe("SCRIPT_LIB_FILES", () => {
  void it("is the reference chain of lib.es2023.d.ts without WeakRef", () => {
    const seen = new Set<string>();
    const chain = new Set<string>();
    const follow = (name: string): void => {
      seen.add(name);
      const text = readFileSync(join(LIB_DIRECTORY, name), "utf8");
      // Aggregate files hold references only; the list keeps the files with declarations.
      if (/^(interface|declare|type) /m.test(text)) chain.add(name);
      for (const ref of ts.preProcessFile(text).libReferenceDirectives) {
        const file = `lib.${ref.fileName}.d.ts`;
        if (!seen.has(file)) follow(file);
      }
    };
    follow("lib.es2023.d.ts");
    const expected = [...chain].filter((name) => name !== "lib.es2021.weakref.d.ts").sort();
    assert.deepEqual([...SCRIPT_LIB_FILES].sort(), expected);
  });
});
