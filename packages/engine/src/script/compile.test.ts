import assert from "node:assert/strict";
import { describe, it } from "node:test";
import variantModule from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from "quickjs-emscripten-core";
import { compileScript, createPositionMapper, mapStack } from "./compile.js";

// Types say the CommonJS shape (`{ default: variant }`); Node's ESM import gives the variant.
const loaded: unknown = variantModule;
const variant = ((loaded as { default?: QuickJSSyncVariant }).default ?? loaded) as QuickJSSyncVariant;

/** Type-only lines (4–9) vanish from the JavaScript, so JS and TS lines differ below them. */
const SCRIPT = `import { github } from "tapedeck:tools";
export const tools = github;

interface Issue {
  number: number;
  title: string;
}
type Issues = Issue[];
type Id = number;
const unused: Id = 0;

function fail(issues: Issues): never {
  throw new Error("no issues: " + issues.length);
}

export default fail([]);
`;

/** Evaluates `js` as the module `script.js` in QuickJS and returns the error's stack. */
async function quickJsStack(js: string): Promise<string> {
  const module = await newQuickJSWASMModuleFromVariant(variant);
  const runtime = module.newRuntime();
  runtime.setModuleLoader((name) => (name === "tapedeck:tools" ? "export const github = {};" : { error: new Error(name) }));
  const context = runtime.newContext();
  try {
    const result = context.evalCode(js, "script.js", { type: "module" });
    if (result.error === undefined) {
      result.value.dispose();
      throw new Error("the script did not throw");
    }
    const error = context.dump(result.error) as { stack?: unknown };
    result.error.dispose();
    assert.equal(typeof error.stack, "string");
    return String(error.stack);
  } finally {
    context.dispose();
    runtime.dispose();
  }
}

void describe("compileScript", () => {
  void it("gives ES module JavaScript without types or a sourceMappingURL, and its map", () => {
    const { js, sourceMap } = compileScript(SCRIPT);
    assert.match(js, /^import \{ github \} from "tapedeck:tools";\nexport const tools = github;\n/);
    assert.match(js, /export default fail\(\[\]\);\n$/);
    assert.doesNotMatch(js, /interface|sourceMappingURL|: Issues/);
    const map = JSON.parse(sourceMap) as { file: string; sources: string[] };
    assert.equal(map.file, "script.js");
    assert.deepEqual(map.sources, ["script.ts"]);
  });
});

void describe("createPositionMapper and mapStack", () => {
  void it("maps a QuickJS stack back to the TypeScript lines, past removed type-only lines", async () => {
    const { js, sourceMap } = compileScript(SCRIPT);
    const stack = await quickJsStack(js);
    // QuickJS 0.32 frames: "    at fail (script.js:LINE:COL)", no "Error: message" header.
    assert.match(stack, /^ {4}at fail \(script\.js:\d+:\d+\)\n/);
    const mapped = mapStack(stack, createPositionMapper(sourceMap));
    const lines = mapped.split("\n");
    assert.match(lines[0] ?? "", /^ {4}at fail \(script\.ts:13:\d+\)$/);
    assert.match(lines[1] ?? "", /\(script\.ts:16:\d+\)$/);
  });

  void it("maps a line without a column, and leaves other files and unmapped lines alone", () => {
    const { sourceMap } = compileScript(SCRIPT);
    const mapper = createPositionMapper(sourceMap);
    const jsLine =
      compileScript(SCRIPT)
        .js.split("\n")
        .findIndex((l) => l.includes("throw")) + 1;
    const stack = `    at fail (script.js:${jsLine})\n    at x (myscript.js:1:1)\n    at y (script.js:999:1)`;
    assert.equal(mapStack(stack, mapper), `    at fail (script.ts:13)\n    at x (myscript.js:1:1)\n    at y (script.js:999:1)`);
    assert.deepEqual(mapper(jsLine, 3), { line: 13, column: 3 });
  });
});
