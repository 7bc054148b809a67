/**
 * The bounds a JSON value must keep to cross a boundary of the engine (into or out of a sandbox,
 * from a tool, a signal, a webhook, an API body), checked before any recursive code of the host
 * (`JSON.stringify`, canonical JSON, structured clone, schema validation) touches it: a value
 * nested a few thousand levels deep overflows the host's stack there, a fault of the process on
 * bad input. The walk here is iterative, so it cannot overflow itself.
 *
 * Lone UTF-16 surrogates are valid in a JavaScript string but have no canonical JSON (RFC 8785
 * refuses them): values that must be canonical (a call's arguments) are checked for them too.
 */

/**
 * Nesting of arrays and objects a value may reach. JSON documents in practice nest a few dozen
 * levels; 256 leaves room for any of them, and is far below what overflows a stack (a few
 * thousand levels in V8's `JSON.stringify`, fewer in recursive validators).
 */
export const MAX_VALUE_DEPTH = 256;

export interface BoundsOptions {
  /** Default `MAX_VALUE_DEPTH`. */
  readonly maxDepth?: number;
  /** Whether a lone surrogate in a string or a key is a problem (values that must be canonical). Default false. */
  readonly refuseLoneSurrogates?: boolean;
}

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

interface Item {
  readonly value: unknown;
  readonly depth: number;
  readonly key: string | number | undefined;
  readonly parent: Item | undefined;
}

/**
 * What is wrong with `value` as a value crossing a boundary, in words for whoever sent it
 * ("it nests arrays and objects more than 256 levels deep (at $.a[0]…)"), or undefined when it
 * keeps the bounds. Reads own enumerable properties only, as JSON would.
 */
export function valueProblem(value: unknown, options: BoundsOptions = {}): string | undefined {
  const maxDepth = options.maxDepth ?? MAX_VALUE_DEPTH;
  const surrogates = options.refuseLoneSurrogates === true;
  const stack: Item[] = [{ value, depth: 0, key: undefined, parent: undefined }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const current = item.value;
    if (typeof current === "string") {
      if (surrogates && hasLoneSurrogate(current))
        return `it holds a lone UTF-16 surrogate in the string at ${pathOf(item)}, which JSON text cannot carry; send well-formed Unicode`;
      continue;
    }
    if (typeof current !== "object" || current === null) continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return `it nests arrays and objects more than ${maxDepth} levels deep (at ${pathOf(item)}); send flatter data`;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], depth, key: i, parent: item });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Item = { value: (current as Record<string, unknown>)[key], depth, key, parent: item };
      if (surrogates && hasLoneSurrogate(key))
        return `it holds a lone UTF-16 surrogate in a key at ${pathOf(child)}, which JSON text cannot carry; send well-formed Unicode`;
      stack.push(child);
    }
  }
  return undefined;
}

/** `$.a[0].b`, shortened past a few levels (the path of a deep value is as deep as the value). */
function pathOf(item: Item): string {
  const parts: string[] = [];
  for (let at: Item | undefined = item; at !== undefined && at.key !== undefined; at = at.parent) {
    parts.push(typeof at.key === "number" ? `[${at.key}]` : /^[A-Za-z_$][\w$]*$/.test(at.key) ? `.${at.key}` : `[${JSON.stringify(at.key.slice(0, 40))}]`);
  }
  parts.reverse();
  const shown = parts.length > 8 ? [...parts.slice(0, 6), "…", ...parts.slice(-1)] : parts;
  return `$${shown.join("")}`;
}
