// Lint: type-aware rules that catch what the compiler does not (floating promises, `any`),
// import cycles across the whole tree, and imports that climb the engine's layers.
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
  // Workflows: saving them, their primitive calls, what a fork reuses of them.
  ["workflows"],
  // Runs: the scheduler, the executor, call intake, waits, journal, dispatcher, child runs.
  ["runs"],
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

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/fixtures/**", "scripts/**", "examples/**", "packages/*/bin/**", "eslint.config.js", ".tapedeck/**"] },
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
    },
  },
  {
    files: [`${ENGINE_SRC}/**/*.ts`],
    ignores: ["**/*.test.ts", "**/*contract.ts", `${ENGINE_SRC}/test-support/**`, `${ENGINE_SRC}/bench/**`],
    rules: {
      "import-x/no-restricted-paths": ["error", { basePath: import.meta.dirname, zones: engineLayerZones }],
    },
  },
);
