import type { JsonObject, JsonSchema, JsonValue } from "@tapedeck/protocol";

/**
 * Observed result types: for a tool that declares no output schema, the shape of the results it
 * has returned, as a JSON Schema of keys and types (never values), merged over every result.
 * A key missing from some results becomes optional; differing types become a union. Bounded so
 * that a hostile or erratic tool cannot grow it without limit: past the bounds a part is
 * `unknown` (`{}`).
 */
const MAX_DEPTH = 6;
const MAX_PROPERTIES = 40;
const MAX_VARIANTS = 4;

export function shapeOf(value: JsonValue, depth = 0): JsonSchema {
  if (depth > MAX_DEPTH) return {};
  if (value === null) return { type: "null" };
  if (Array.isArray(value)) {
    const items = value.slice(0, 50).reduce<JsonSchema | undefined>((shape, item) => {
      const next = shapeOf(item, depth + 1);
      return shape === undefined ? next : mergeShapes(shape, next, depth + 1);
    }, undefined);
    return items === undefined ? { type: "array" } : { type: "array", items: items as JsonValue };
  }
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    if (keys.length > MAX_PROPERTIES) return { type: "object" };
    // Keys are a tool's data: defined, never assigned (`__proto__` would set the prototype).
    const properties: JsonObject = Object.fromEntries(keys.map((key) => [key, shapeOf(value[key]!, depth + 1)]));
    return { type: "object", properties, required: keys };
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
  if (a.properties === undefined || b.properties === undefined) return { type: "object" };
  const pa = a.properties as JsonObject;
  const pb = b.properties as JsonObject;
  const keys = [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort();
  if (keys.length > MAX_PROPERTIES) return { type: "object" };
  // Own keys only: a key such as `constructor` missing from one side must not be found on Object.prototype.
  const own = (properties: JsonObject, key: string) => (Object.hasOwn(properties, key) ? properties[key] : undefined);
  const properties: JsonObject = Object.fromEntries(
    keys.map((key) => {
      const x = own(pa, key);
      const y = own(pb, key);
      return [key, (x !== undefined && y !== undefined ? mergeShapes(x as JsonSchema, y as JsonSchema, depth + 1) : (x ?? y)!)];
    }),
  );
  const requiredA = new Set(a.required as string[]);
  const required = (b.required as string[]).filter((key) => requiredA.has(key)).sort();
  return { type: "object", properties, required };
}
