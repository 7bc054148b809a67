import { LABELS, NAMESPACE_MAX_LENGTH } from "./limits.js";
import { schemaFor } from "./schema-for.js";

/** Labels of a run, or the labels a key or token is limited to. Every key and value is a string. */
export type Labels = Readonly<Record<string, string>>;

export const labels = schemaFor<Labels>()({
  type: "object",
  description: "Labels: string keys and values.",
  maxProperties: LABELS.maxCount,
  propertyNames: { minLength: 1, maxLength: LABELS.maxKeyLength },
  additionalProperties: { type: "string", maxLength: LABELS.maxValueLength },
});

/** An end user's id: the namespace their runs, tokens and credentials belong to. */
export const namespace = { type: "string", minLength: 1, maxLength: NAMESPACE_MAX_LENGTH, description: "An end user's id." } as const;

/** The header that narrows a request to one end user (see `Tapedeck.namespace`). */
export const NAMESPACE_HEADER = "tapedeck-namespace";
