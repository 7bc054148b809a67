// Lint: type-aware rules that catch what the compiler does not (floating promises, `any`),
// import cycles across the whole tree, imports that reach into another package, and product code
// that imports what only the tests depend on.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import tseslint from "typescript-eslint";
import importX from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

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
 * devDependencies. So the server's product cannot come to need the SDK again, nor the engine's zod.
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
  ...DEPENDENCIES,
);
