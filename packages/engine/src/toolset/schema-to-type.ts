import type { JsonSchema, JsonValue } from "@tapedeck/protocol";

/**
 * Renders a JSON Schema as a TypeScript type expression, for the declarations of the
 * `tapedeck:tools` module: the type-checker's copy (`ts`) and the model's compact copy (`prompt`).
 *
 * Invariants:
 * - Never throws and never fetches. What a type cannot say (network `$ref`, `not`, unknown
 *   keywords) becomes `unknown`: the type-checker accepts more, and the run-time validation
 *   against the full schema still rejects what is wrong.
 * - Deterministic: the same schema gives the same text; properties keep the schema's order.
 * - Local `$ref`s (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer) are inlined, not named:
 *   `$defs` of different tools may share names with different shapes, and the one-line prompt
 *   has no room for aliases. A ref met again while it is being expanded (a recursive schema)
 *   becomes `unknown`, so `Tree = { children: Tree[] }` renders `{ children: unknown[] }`.
 * - Output size is bounded (`MAX_DEPTH`, `MAX_NODES`) whatever the schema.
 *
 * One file, a little long, because the keyword renderers recurse into one another.
 */

export interface SchemaToTypeOptions {
  /** `ts`: `;` separators, JSDoc from `description`, objects with JSDoc span lines. `prompt`: one line, `,` separators. */
  readonly style: "ts" | "prompt";
  /** The document local `$ref`s resolve against. Default: the schema itself. */
  readonly root?: JsonSchema;
  /** Indentation of the line the type starts on (`ts` style), so nested lines line up. Default `""`. */
  readonly indent?: string;
}

/** Nesting deeper than this renders `unknown`: it keeps recursion off the stack limit and types readable. */
const MAX_DEPTH = 32;
/** Subschemas rendered per call; past it, `unknown`. Non-recursive refs can fan out exponentially. */
const MAX_NODES = 5_000;

/** A rendered type, with its top-level operator so that callers know when to parenthesize. */
interface Ty {
  readonly text: string;
  readonly op?: "|" | "&";
  /** For a union: its members, so that nested unions flatten and deduplicate. */
  readonly members?: readonly string[];
}

interface Ctx {
  readonly style: "ts" | "prompt";
  readonly root: JsonValue;
  readonly indent: string;
  readonly depth: number;
  /** Ref targets being expanded on the current path: meeting one again means recursion. */
  readonly expanding: ReadonlySet<object>;
  readonly budget: { nodes: number };
}

type SchemaObject = { readonly [key: string]: JsonValue };

const UNKNOWN: Ty = { text: "unknown" };
const NEVER: Ty = { text: "never" };
const NULL: Ty = { text: "null" };
/** By the schema's `type`, a server's text: a Map, so `"constructor"` finds nothing. */
const PRIMITIVES: ReadonlyMap<string, Ty> = new Map([
  ["string", { text: "string" }],
  ["number", { text: "number" }],
  ["integer", { text: "number" }],
  ["boolean", { text: "boolean" }],
  ["null", NULL],
]);

/** Renders `schema` as a TypeScript type expression. */
export function schemaToType(schema: JsonSchema, options: SchemaToTypeOptions): string {
  const ctx: Ctx = {
    style: options.style,
    root: options.root ?? schema,
    indent: options.indent ?? "",
    depth: 0,
    expanding: new Set(),
    budget: { nodes: MAX_NODES },
  };
  return render(schema, ctx).text;
}

function render(schema: JsonValue | undefined, ctx: Ctx): Ty {
  if (schema === true) return UNKNOWN;
  if (schema === false) return NEVER;
  if (!isObject(schema) || ctx.depth > MAX_DEPTH || --ctx.budget.nodes < 0) return UNKNOWN;
  if (typeof schema.$ref === "string") return renderRef(schema.$ref, ctx);
  const type = intersection([renderBase(schema, ctx), ...renderCombinators(schema, ctx)]);
  return schema.nullable === true ? union([type, NULL]) : type; // OpenAPI's `nullable`
}

function renderBase(schema: SchemaObject, ctx: Ctx): Ty {
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  const types = typesOf(schema);
  return types ? union(types.map((type) => renderTyped(type, schema, ctx))) : UNKNOWN;
}

/** The schema's `type`, or the one its keywords imply (`properties` → object, `items` → array). */
function typesOf(schema: SchemaObject): readonly string[] | undefined {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t) => typeof t === "string");
  if ("properties" in schema || "additionalProperties" in schema || "patternProperties" in schema) return ["object"];
  if ("items" in schema || "prefixItems" in schema) return ["array"];
  return undefined;
}

function renderTyped(type: string, schema: SchemaObject, ctx: Ctx): Ty {
  if (type === "object") return renderObject(schema, ctx);
  if (type === "array") return renderArray(schema, ctx);
  return PRIMITIVES.get(type) ?? UNKNOWN;
}

function renderCombinators(schema: SchemaObject, ctx: Ctx): Ty[] {
  const inner = descend(ctx);
  const each = (list: JsonValue | undefined): Ty[] => (Array.isArray(list) ? list.map((s) => render(s, inner)) : []);
  const parts: Ty[] = [];
  if (Array.isArray(schema.anyOf)) parts.push(union(each(schema.anyOf)));
  if (Array.isArray(schema.oneOf)) parts.push(union(each(schema.oneOf)));
  return [...parts, ...each(schema.allOf)];
}

function renderRef(ref: string, ctx: Ctx): Ty {
  const target = resolvePointer(ctx.root, ref);
  if (target === undefined) return UNKNOWN;
  if (!isObject(target)) return render(target, descend(ctx));
  if (ctx.expanding.has(target)) return UNKNOWN; // recursion: see the invariants above
  return render(target, { ...descend(ctx), expanding: new Set([...ctx.expanding, target]) });
}

/** Resolves a local JSON pointer (RFC 6901 in a URI fragment). Anything else is not ours to fetch. */
function resolvePointer(root: JsonValue, ref: string): JsonValue | undefined {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: JsonValue | undefined = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeSegment(raw);
    if (key === undefined || typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as { readonly [key: string]: JsonValue })[key];
  }
  return node;
}

function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return undefined; // malformed percent-encoding: the ref resolves to nothing
  }
}

function renderArray(schema: SchemaObject, ctx: Ctx): Ty {
  const inner = descend(ctx);
  // 2020-12 tuples are `prefixItems` + `items` (rest); draft-07 ones are `items: [..]` + `additionalItems`.
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  if (prefix === undefined) return arrayOf(rest === undefined ? UNKNOWN : render(rest, inner));
  // Without `minItems`, every prefix element is taken as required: that is what authors of tuples mean.
  const minItems = typeof schema.minItems === "number" ? schema.minItems : prefix.length;
  const elements = prefix.map((item, i) => {
    const type = render(item, inner);
    return i < minItems ? type.text : `${parenthesize(type, "postfix")}?`;
  });
  const restType = rest === undefined ? UNKNOWN : render(rest, inner);
  if (restType !== NEVER) elements.push(`...${arrayOf(restType).text}`);
  return { text: `[${elements.join(", ")}]` };
}

function arrayOf(type: Ty): Ty {
  return { text: `${parenthesize(type, "postfix")}[]` };
}

interface Member {
  readonly key: string;
  readonly optional: boolean;
  readonly type: Ty;
  readonly doc?: string;
}

function renderObject(schema: SchemaObject, ctx: Ctx): Ty {
  const inner = { ...descend(ctx), indent: `${ctx.indent}  ` };
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const properties = isObject(schema.properties) ? Object.entries(schema.properties) : [];
  const members: Member[] = properties.map(([key, sub]) => ({
    key: propertyKey(key),
    optional: !required.has(key),
    type: render(sub, inner),
    ...descriptionOf(sub),
  }));
  const index = indexSignature(schema, members, inner);
  if (index) members.push({ key: "[key: string]", optional: false, type: index });
  return { text: formatObject(members, ctx) };
}

/** The type of the `[key: string]` signature, from `additionalProperties` and `patternProperties`, if any. */
function indexSignature(schema: SchemaObject, members: readonly Member[], ctx: Ctx): Ty | undefined {
  const extra = schema.additionalProperties;
  const patterns = isObject(schema.patternProperties) ? Object.values(schema.patternProperties) : [];
  const open = !("properties" in schema) && extra === undefined && patterns.length === 0; // `{ type: "object" }`
  const sources = [...(extra === undefined || extra === false ? [] : [extra]), ...patterns, ...(open ? [true] : [])];
  if (sources.length === 0) return undefined;
  const index = union(sources.map((s) => render(s, ctx)));
  return ctx.style === "ts" ? fitNamed(index, members) : index;
}

/**
 * TypeScript wants every named property to fit the index signature (TS2411). When they all have
 * its type, add `undefined` for the optional ones; otherwise widen to `unknown` rather than print
 * a long union of every property's type.
 */
function fitNamed(index: Ty, members: readonly Member[]): Ty {
  const allowed = new Set(index.members ?? [index.text]);
  if (!members.every((m) => (m.type.members ?? [m.type.text]).every((t) => allowed.has(t)))) return UNKNOWN;
  return members.some((m) => m.optional) ? union([index, { text: "undefined" }]) : index;
}

function formatObject(members: readonly Member[], ctx: Ctx): string {
  if (members.length === 0) return "{}";
  const line = (m: Member): string => `${m.key}${m.optional ? "?" : ""}: ${m.type.text}`;
  if (ctx.style === "prompt") return `{ ${members.map(line).join(", ")} }`;
  const multiline = members.some((m) => m.doc !== undefined || m.type.text.includes("\n"));
  if (!multiline) return `{ ${members.map(line).join("; ")} }`;
  const pad = `${ctx.indent}  `;
  const lines = members.flatMap((m) => [...(m.doc === undefined ? [] : [jsDoc(m.doc, pad)]), `${pad}${line(m)};`]);
  return `{\n${lines.join("\n")}\n${ctx.indent}}`;
}

/** `A | B`. `unknown` absorbs the others; `never` vanishes. */
function union(types: readonly Ty[]): Ty {
  if (types.some((t) => t === UNKNOWN)) return UNKNOWN;
  const kept = types.filter((t) => t !== NEVER);
  const members = unique(kept.flatMap((t) => t.members ?? [t.text]));
  if (members.length === 0) return NEVER;
  if (members.length === 1) return kept.find((t) => t.text === members[0]) ?? { text: members.join("") };
  return { text: members.join(" | "), op: "|", members };
}

/** `A & B`. `never` absorbs the others; `unknown` vanishes. */
function intersection(types: readonly Ty[]): Ty {
  if (types.some((t) => t === NEVER)) return NEVER;
  const kept = types.filter((t) => t !== UNKNOWN);
  const texts = unique(kept.map((t) => parenthesize(t, "intersection")));
  if (texts.length <= 1) return kept[0] ?? UNKNOWN;
  return { text: texts.join(" & "), op: "&" };
}

/** The type's text, in parentheses when its operator binds looser than where it is written. */
function parenthesize(type: Ty, where: "intersection" | "postfix"): string {
  const needs = type.op === "|" || (type.op === "&" && where === "postfix");
  return needs ? `(${type.text})` : type.text;
}

/** A `const`/`enum` value as a literal type: JSON text is valid TypeScript type syntax. */
function literal(value: JsonValue | undefined): Ty {
  return value === undefined ? UNKNOWN : { text: JSON.stringify(value) };
}

/** A property's `description`, when it has one worth a JSDoc. */
function descriptionOf(schema: JsonValue | undefined): { doc?: string } {
  const doc = isObject(schema) && typeof schema.description === "string" ? schema.description.trim() : "";
  return doc === "" ? {} : { doc };
}

function descend(ctx: Ctx): Ctx {
  return { ...ctx, depth: ctx.depth + 1 };
}

function unique(texts: readonly string[]): string[] {
  return [...new Set(texts)];
}

function isObject(value: JsonValue | undefined): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** True when `name` can be written bare as a property or member name. */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** A property name as written in a type: bare when it is an identifier, JSON-quoted otherwise. */
export function propertyKey(name: string): string {
  return isIdentifier(name) ? name : JSON.stringify(name);
}

/** A JSDoc comment at `indent`; `*\/` in the text is escaped so the comment cannot end early. */
export function jsDoc(text: string, indent: string): string {
  const lines = text
    .replaceAll("*/", "*\\/")
    .trim()
    .split(/\r?\n/)
    .map((l) => l.trimEnd());
  if (lines.length === 1) return `${indent}/** ${lines[0]} */`;
  return [`${indent}/**`, ...lines.map((l) => (l === "" ? `${indent} *` : `${indent} * ${l}`)), `${indent} */`].join("\n");
}
