// Lets @modelcontextprotocol/conformance 0.1.16 start on Node 20: it imports `globSync` from
// `fs`, which Node added in 22. Use with `node --import ./scripts/conformance/node20-globsync.mjs`.
// Only the conformance package's `fs` is redirected, to a module that is `node:fs` plus
// `globSync` from the `glob` package (a root devDependency); everything else sees the real `fs`.
// On Node 22+ nothing is redirected.
import fs from "node:fs";
import { register } from "node:module";

const dataUrl = (source) => `data:text/javascript,${encodeURIComponent(source)}`;

if (typeof fs.globSync !== "function") {
  const fsWithGlob = dataUrl(
    `import fs from "node:fs"; export * from "node:fs"; export { globSync } from ${JSON.stringify(import.meta.resolve("glob"))}; export default fs;`,
  );
  const hooks = dataUrl(`
    export function resolve(specifier, context, nextResolve) {
      const fromConformance = context.parentURL?.includes("/node_modules/@modelcontextprotocol/conformance/") ?? false;
      if (fromConformance && (specifier === "fs" || specifier === "node:fs")) return { url: ${JSON.stringify(fsWithGlob)}, shortCircuit: true };
      return nextResolve(specifier, context);
    }`);
  register(hooks);
}
