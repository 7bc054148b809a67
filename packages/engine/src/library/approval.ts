/** Moved to `toolset/approval.ts` (a toolset file's policies use it, below the library); re-exported for the library's modules. */
export * from "../toolset/approval.js";
