/** Moved to `store/rate-limit-store.ts` (the store keeps the windows); re-exported for the library. */
export * from "../../store/rate-limit-store.js";
