/** Moved to `toolset/sensitive-params.ts` (a toolset file's policies use it, below the library); re-exported for the library's modules. */
export * from "../toolset/sensitive-params.js";
