import { LABELS, NAMESPACE_MAX_LENGTH } from "./limits.js";
import { NAMESPACE_FORMAT } from "./namespace-name.js";
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

/**
 * An end user's id: the namespace their runs, tokens and credentials belong to. Its `format`
 * (`NAMESPACE_FORMAT`) is `namespaceProblem`'s rule: the server's validator knows it.
 */
export const namespace = {
  type: "string",
  minLength: 1,
  maxLength: NAMESPACE_MAX_LENGTH,
  format: NAMESPACE_FORMAT,
  description: "An end user's id: no space at either end, no control or invisible character, in Unicode normal form (NFKC).",
} as const;

/** The header that narrows a request to one end user (see `Tapedeck.namespace`). */
export const NAMESPACE_HEADER = "tapedeck-namespace";
