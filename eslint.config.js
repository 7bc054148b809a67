// Lint: type-aware rules that catch what the compiler does not (floating promises, `any`),
// import cycles across the whole tree, imports that climb the engine's layers, imports that reach
// into another package, and product code that imports what only the tests depend on.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

/**
 * The layers of `@tapedeck/engine`, lowest first (docs/design/engine.md). A file may import its
 * own layer and the layers below it, never one above: the engine reads bottom-up, and no folder
 * waits on another in a loop. Paths are relative to `packages/engine/src`; test files, the
 * contract suites beside the seams, `test-support/` and `bench/` may import anything.
 */
const ENGINE_LAYERS = [
  // Helpers that know no engine concept, and the engine's clock, errors and limits.
  ["util", "clock.ts", "errors.ts", "limits.ts"],
  // Addresses and host patterns (the http tool's, the vault's, toolset files').
  ["net"],
  // The store seam and its SQLite implementation.
  ["store"],
  // Credentials (vault, injection, resolution) and the leak scanner.
  ["secrets"],
  // The tool source seam and its implementations (host tools, MCP, http).
  ["sources"],
  // The sandbox seam and its QuickJS implementation.
  ["sandbox"],
  // Type-checking and transpiling scripts.
  ["script"],
  // Toolsets: pinning, declarations, policies, search, the catalogue of loaded toolsets.
  ["toolset"],
  // The built-in tool library (seed 004): each group's tools, their contract, rate limits.
  ["library"],
  // User-built tools in a sandbox of their own, with the capabilities their grants give.
  ["user-tools"],
  // Workflows: saving them, their primitive calls, what a fork reuses of them.
  ["workflows"],
  // Runs: the scheduler, the executor, call intake, waits, journal, dispatcher, child runs.
  ["runs"],
  // Direct tool mode: model tool calls without a script (seed 002), over the call intake.
  ["direct"],
  // test_script: scenarios in virtual time.
  ["testing"],
  // The public facade and the package's entry points.
  ["engine.ts", "index.ts", "net.ts"],
];
const ENGINE_SRC = "packages/engine/src";
const engineLayerZones = ENGINE_LAYERS.slice(0, -1).map((layer, i) => ({
  target: layer.map((path) => `${ENGINE_SRC}/${path}`),
  from: ENGINE_LAYERS.slice(i + 1)
    .flat()
    .map((path) => `${ENGINE_SRC}/${path}`),
  message: `climbs the engine's layers: ${layer.join(", ")} may import only ${ENGINE_LAYERS.slice(0, i + 1)
    .flat()
    .join(", ")} (see ENGINE_LAYERS in eslint.config.js).`,
}));

/**
 * Every entry point of the workspace's packages, from their package.json `exports`
 * (`@tapedeck/engine`, `@tapedeck/engine/net`…): the only ways into a package from another.
 */
const PACKAGES = readdirSync(join(import.meta.dirname, "packages")).map((dir) => join(import.meta.dirname, "packages", dir));
const ENTRY_POINTS = PACKAGES.flatMap((dir) => {
  const { name, exports } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  return Object.keys(exports).map((subpath) => (subpath === "." ? name : `${name}/${subpath.slice(2)}`));
});

/**
 * Per package: its product code imports only its `dependencies` (types included: a type import
 * lands in the published `.d.ts`), while its test code (what its product tsconfig.json excludes:
 * tests, test-support/, its own test-only files) may import its and the repository's
 * devDependencies. So the engine's product cannot come to need zod, nor any product a test's tool.
 */
const DEPENDENCIES = PACKAGES.map((dir) => {
  const { config } = ts.readConfigFile(join(dir, "tsconfig.json"), ts.sys.readFile);
  const testCode = config.exclude.map((pattern) => join(dir, pattern));
  return {
    // Flat config matches `files` relative to this file's folder; the rule's globs are absolute.
    files: [`${relative(import.meta.dirname, dir)}/src/**/*.ts`],
    rules: {
      "import-x/no-extraneous-dependencies": ["error", { packageDir: [import.meta.dirname, dir], devDependencies: testCode, includeTypes: true }],
    },
  };
});

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/dist-test/**",
      "**/node_modules/**",
      "**/fixtures/**",
      "scripts/**",
      "examples/**",
      "packages/*/bin/**",
      "eslint.config.js",
      ".tapedeck/**",
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    // The TypeScript resolver maps "./x.js" to "./x.ts" and workspace packages to their
    // sources; without it no-cycle resolves nothing and passes silently.
    settings: {
      ...importX.flatConfigs.typescript.settings,
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: "tsconfig.base.json", noWarnOnMultipleProjects: true })],
    },
    rules: {
      // node:test's describe/it return promises the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["describe", "it", "test", "suite", "before", "after", "beforeEach", "afterEach"] },
          ],
        },
      ],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      // Another package only through its entry points: what it does not export is not its API
      // (and is not in its tarball's shape), however the monorepo lays its files out.
      "import-x/no-relative-packages": "error",
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              // A subpath of a Tapedeck package that is not one of its entry points.
              regex: `^(?!(?:${ENTRY_POINTS.map((entry) => entry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$)@tapedeck/[^/]+/.+`,
              message: `Import a Tapedeck package through its entry points (its package.json exports): ${ENTRY_POINTS.join(", ")}. Export what you need there, or move it.`,
            },
          ],
        },
      ],
    },
  },
  {
    files: [`${ENGINE_SRC}/**/*.ts`],
    ignores: ["**/*.test.ts", "**/*contract.ts", `${ENGINE_SRC}/test-support/**`, `${ENGINE_SRC}/bench/**`],
    rules: {
      "import-x/no-restricted-paths": ["error", { basePath: import.meta.dirname, zones: engineLayerZones }],
    },
  },
  ...DEPENDENCIES,
);
