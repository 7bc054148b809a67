import type { Diagnostic } from "../diagnostic.js";
import { schemaFor } from "./schema-for.js";

/** One problem in a script, positioned for whoever must fix it (usually the model). */
export type { Diagnostic };

export const diagnostic = schemaFor<Diagnostic>()({
  type: "object",
  properties: {
    line: { type: "integer" },
    column: { type: "integer" },
    code: { type: ["integer", "string"] },
    category: { type: "string", enum: ["error", "warning"] },
    message: { type: "string" },
    frame: { type: "string" },
  },
  required: ["line", "column", "code", "category", "message", "frame"],
});
