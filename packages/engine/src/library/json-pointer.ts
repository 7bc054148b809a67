/** Moved to `toolset/json-pointer.ts` (a toolset file's policies use it, below the library); re-exported for the library's modules. */
export * from "../toolset/json-pointer.js";
