/**
 * The nesting depth a request body may reach. V8 parses JSON of any depth, but serialising it
 * again (the store writes inputs and payloads with `JSON.stringify`) and handing it to the
 * sandbox recurse, so a deep enough body would exhaust a stack: a fault of the server on bad
 * input. 256 levels is far deeper than any real document.
 */
export const MAX_JSON_DEPTH = 256;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What makes a parsed body unfit to go further, or undefined: `deep` (nested past `max`), or
 * `surrogate` (a lone UTF-16 surrogate in a string or a key: JSON escapes can spell one, but no
 * canonical JSON, hash or well-formed text holds it). Iterative, so it cannot overflow itself.
 */
export function bodyProblem(value: unknown, max: number): "deep" | "surrogate" | undefined {
  const stack: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value === "string") {
      if (LONE_SURROGATE.test(item.value)) return "surrogate";
      continue;
    }
    if (typeof item.value !== "object" || item.value === null) continue;
    const depth = item.depth + 1;
    if (depth > max) return "deep";
    for (const [key, child] of Object.entries(item.value)) {
      if (LONE_SURROGATE.test(key)) return "surrogate";
      stack.push({ value: child, depth });
    }
  }
  return undefined;
}

/** The refusal of a body with `problem`, for whoever sent it. */
export function bodyProblemMessage(problem: "deep" | "surrogate"): string {
  return problem === "deep"
    ? `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; send flatter data.`
    : "The body holds a lone UTF-16 surrogate (a \\ud800–\\udfff escape without its pair), which is not text: send well-formed Unicode (binary data as base64, for example).";
}
