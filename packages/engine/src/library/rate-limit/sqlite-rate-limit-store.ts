/** Moved to `store/sqlite-rate-limit-store.ts` (the SQLite store keeps the windows in its database); re-exported for the library. */
export * from "../../store/sqlite-rate-limit-store.js";
