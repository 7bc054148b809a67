import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";

/**
 * The ECMAScript library a script is checked against: ES2023 as the sandbox provides it, that
 * is without `WeakRef` and `FinalizationRegistry` (the sandbox removes them: garbage-collection
 * timing would make a replay diverge). `lib.es2023.d.ts` reaches `lib.es2021.weakref.d.ts`
 * through `lib.es2021.d.ts`, so instead of naming it we list every file of its reference chain
 * except that one (and the aggregate files, which only hold references). A test re-derives the
 * chain from the installed TypeScript so an upgrade that adds a file fails loudly.
 */
export const SCRIPT_LIB_FILES: readonly string[] = [
  "lib.es5.d.ts",
  "lib.decorators.d.ts",
  "lib.decorators.legacy.d.ts",
  "lib.es2015.core.d.ts",
  "lib.es2015.collection.d.ts",
  "lib.es2015.iterable.d.ts",
  "lib.es2015.generator.d.ts",
  "lib.es2015.promise.d.ts",
  "lib.es2015.proxy.d.ts",
  "lib.es2015.reflect.d.ts",
  "lib.es2015.symbol.d.ts",
  "lib.es2015.symbol.wellknown.d.ts",
  "lib.es2016.array.include.d.ts",
  "lib.es2016.intl.d.ts",
  "lib.es2017.arraybuffer.d.ts",
  "lib.es2017.date.d.ts",
  "lib.es2017.intl.d.ts",
  "lib.es2017.object.d.ts",
  "lib.es2017.sharedmemory.d.ts",
  "lib.es2017.string.d.ts",
  "lib.es2017.typedarrays.d.ts",
  "lib.es2018.asynciterable.d.ts",
  "lib.es2018.asyncgenerator.d.ts",
  "lib.es2018.promise.d.ts",
  "lib.es2018.regexp.d.ts",
  "lib.es2018.intl.d.ts",
  "lib.es2019.array.d.ts",
  "lib.es2019.object.d.ts",
  "lib.es2019.string.d.ts",
  "lib.es2019.symbol.d.ts",
  "lib.es2019.intl.d.ts",
  "lib.es2020.bigint.d.ts",
  "lib.es2020.date.d.ts",
  "lib.es2020.number.d.ts",
  "lib.es2020.promise.d.ts",
  "lib.es2020.sharedmemory.d.ts",
  "lib.es2020.string.d.ts",
  "lib.es2020.symbol.wellknown.d.ts",
  "lib.es2020.intl.d.ts",
  "lib.es2021.promise.d.ts",
  "lib.es2021.string.d.ts",
  "lib.es2021.intl.d.ts",
  "lib.es2022.array.d.ts",
  "lib.es2022.error.d.ts",
  "lib.es2022.intl.d.ts",
  "lib.es2022.object.d.ts",
  "lib.es2022.regexp.d.ts",
  "lib.es2022.string.d.ts",
  "lib.es2023.array.d.ts",
  "lib.es2023.collection.d.ts",
  "lib.es2023.intl.d.ts",
];

/** Where the installed TypeScript keeps its lib files. */
export const LIB_DIRECTORY = dirname(ts.getDefaultLibFilePath({}));

const libPaths = new Set(SCRIPT_LIB_FILES.map((name) => join(LIB_DIRECTORY, name)));

/**
 * Parsed lib files, shared by every checker in the process: parsing and binding them is most
 * of a cold check (~1 s), and a bound SourceFile can be shared by many programs, as
 * TypeScript's own language service does.
 */
const parsed = new Map<string, ts.SourceFile>();

/** Is `path` one of the lib files a script may see? Any other lib (DOM, WeakRef) stays out. */
export function isScriptLibFile(path: string): boolean {
  return libPaths.has(path);
}

/**
 * The parsed lib file at `path`, from the cache; undefined when it is not a script lib file.
 * Parsed with the `options` of the first request: every checker compiles with the same ones.
 */
export function libSourceFile(path: string, options: ts.CreateSourceFileOptions): ts.SourceFile | undefined {
  if (!libPaths.has(path)) return undefined;
  let file = parsed.get(path);
  if (file === undefined) {
    file = ts.createSourceFile(path, readFileSync(path, "utf8"), options);
    parsed.set(path, file);
  }
  return file;
}
