import type { JsonObject, JsonSchema, JsonValue } from "@tapedeck/protocol";
import { looksLikeData } from "./data-keys.js";

/**
 * Observed result types: for a tool that declares no output schema, the shape of the results it
 * has returned, as a JSON Schema of keys and types (never values), merged over every result.
 * A key missing from some results becomes optional; differing types become a union. Bounded so
 * that a hostile or erratic tool cannot grow it without limit: past the bounds a part is
 * `unknown` (`{}`).
 *
 * Keys become property names only when they are names: the declarations are shown to every
 * user of the toolset, so an object keyed by data is a record (`additionalProperties`: the type
 * of its values, `Record<string, T>` in the declarations), never a list of someone's data. An
 * object is keyed by data when one of its keys looks like data (`data-keys.ts`: emails, ids,
 * hashes, numbers…), when it has more than `MAX_PROPERTIES` keys, or when two results' objects
 * share no key and have more than `DISJOINT_KEYS` between them (a map from names to values).
 * In a record, only identifier-like keys keep a name (among at most `MAX_PROPERTIES` keys), and
 * only while they recur: a merge keeps the names both shapes have; every other key is one more
 * value of the record.
 *
 * Invariant: every value a shape was made from conforms to it (as a JSON Schema), up to the
 * bounds (arrays and records are sampled, past the depth everything is `unknown`).
 */
const MAX_DEPTH = 6;
const MAX_PROPERTIES = 40;
const MAX_VARIANTS = 4;
/** Two objects with no key in common and more keys than this together are keyed by data. */
const DISJOINT_KEYS = 8;
/** Elements of an array, values of a record, looked at per value: enough for their shape, bounded. */
const SAMPLE = 50;

export function shapeOf(value: JsonValue, depth = 0): JsonSchema {
  if (depth > MAX_DEPTH) return {};
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) {
    const items = mergeAll(
      value.slice(0, SAMPLE).map((item) => shapeOf(item, depth + 1)),
      depth + 1,
    );
    return items === undefined ? { type: "array" } : { type: "array", items: items as JsonValue };
  }
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    const shapes = new Map(keys.slice(0, keys.length > MAX_PROPERTIES ? SAMPLE : keys.length).map((key) => [key, shapeOf(value[key]!, depth + 1)]));
    // Defined, not assigned: no key reaches a setter of Object.prototype.
    const named = (names: readonly string[]): JsonObject => ({
      properties: Object.fromEntries(names.map((key) => [key, shapes.get(key)!])),
      required: [...names],
    });
    if (keys.length <= MAX_PROPERTIES && !keys.some(looksLikeData)) return { type: "object", ...named(keys) };
    // Keyed by data: a record of its values. Among a few keys, the names stay named until a
    // result without them shows they do not recur.
    const additionalProperties = (mergeAll([...shapes.values()], depth + 1) ?? {}) as JsonValue;
    const names = keys.length > MAX_PROPERTIES ? [] : keys.filter((key) => !looksLikeData(key));
    return { type: "object", ...(names.length === 0 ? {} : named(names)), additionalProperties };
  }
  return { type: typeof value === "number" ? "number" : typeof value === "boolean" ? "boolean" : "string" };
}

/** The shape of values that have either shape. */
export function mergeShapes(a: JsonSchema, b: JsonSchema, depth = 0): JsonSchema {
  if (typeof a === "boolean" || typeof b === "boolean" || isUnknown(a) || isUnknown(b) || depth > MAX_DEPTH) return {};
  const variants = [...variantsOf(a)];
  for (const variant of variantsOf(b)) {
    const index = variants.findIndex((v) => v.type === variant.type);
    if (index === -1) variants.push(variant);
    else variants[index] = mergeSameType(variants[index]!, variant, depth);
  }
  if (variants.length > MAX_VARIANTS) return {};
  return variants.length === 1 ? variants[0]! : { anyOf: variants as JsonValue[] };
}

/**
 * A shape as it may be declared: a shape recorded before keys were judged (one that names
 * data keys) comes back as a record; a shape recorded since comes back unchanged.
 */
export function declarableShape(shape: JsonSchema): JsonSchema {
  return mergeShapes(shape, shape);
}

function mergeAll(shapes: readonly JsonSchema[], depth: number): JsonSchema | undefined {
  return shapes.reduce<JsonSchema | undefined>((merged, next) => (merged === undefined ? next : mergeShapes(merged, next, depth)), undefined);
}

function isUnknown(shape: JsonObject): boolean {
  return shape.type === undefined && shape.anyOf === undefined;
}

function variantsOf(shape: JsonObject): JsonObject[] {
  return Array.isArray(shape.anyOf) ? (shape.anyOf as JsonObject[]) : [shape];
}

function mergeSameType(a: JsonObject, b: JsonObject, depth: number): JsonObject {
  if (a.type === "array") {
    if (a.items === undefined) return b;
    if (b.items === undefined) return a;
    return { type: "array", items: mergeShapes(a.items as JsonSchema, b.items as JsonSchema, depth + 1) };
  }
  if (a.type !== "object") return a;
  return mergeObjects(a, b, depth);
}

function isRecord(shape: JsonObject): boolean {
  return shape.additionalProperties !== undefined;
}

function propertiesOf(shape: JsonObject): Readonly<Record<string, JsonSchema>> {
  return (shape.properties ?? {}) as Readonly<Record<string, JsonSchema>>;
}

function mergeObjects(a: JsonObject, b: JsonObject, depth: number): JsonObject {
  // `{ type: "object" }` (any object) absorbs the rest.
  if ((a.properties === undefined && !isRecord(a)) || (b.properties === undefined && !isRecord(b))) return { type: "object" };
  const pa = propertiesOf(a);
  const pb = propertiesOf(b);
  const keys = [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort();
  const shared = keys.filter((key) => Object.hasOwn(pa, key) && Object.hasOwn(pb, key));
  const requiredA = new Set((a.required ?? []) as string[]);
  const requiredB = new Set((b.required ?? []) as string[]);
  const merged = (key: string): JsonSchema => {
    const x = Object.hasOwn(pa, key) ? pa[key] : undefined;
    const y = Object.hasOwn(pb, key) ? pb[key] : undefined;
    return x !== undefined && y !== undefined ? mergeShapes(x, y, depth + 1) : (x ?? y)!;
  };
  const keyedByData =
    isRecord(a) || isRecord(b) || keys.length > MAX_PROPERTIES || keys.some(looksLikeData) || (shared.length === 0 && keys.length > DISJOINT_KEYS);
  if (!keyedByData) {
    const properties: JsonObject = Object.fromEntries(keys.map((key) => [key, merged(key)]));
    return { type: "object", properties, required: keys.filter((key) => requiredA.has(key) && requiredB.has(key)) };
  }
  // A record. The names both shapes have recur: they keep their name (and count as values too,
  // so the index signature's type covers them); every other key is one more value.
  const kept = shared.filter((key) => !looksLikeData(key)).slice(0, MAX_PROPERTIES);
  const values = [
    ...(isRecord(a) ? [a.additionalProperties as JsonSchema] : []),
    ...(isRecord(b) ? [b.additionalProperties as JsonSchema] : []),
    ...keys.slice(0, SAMPLE).map(merged),
  ];
  const additionalProperties = (mergeAll(values, depth + 1) ?? {}) as JsonValue;
  if (kept.length === 0) return { type: "object", additionalProperties };
  const properties: JsonObject = Object.fromEntries(kept.map((key) => [key, merged(key)]));
  return { type: "object", properties, required: kept.filter((key) => requiredA.has(key) && requiredB.has(key)), additionalProperties };
}
