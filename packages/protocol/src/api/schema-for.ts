/**
 * Each type of the HTTP API is written once as a TypeScript type (documented: the SDK's and the
 * server handlers' types) and once as the JSON Schema the server validates it with and publishes
 * at `GET /openapi.json`, side by side, and the compiler holds the two together:
 *
 *     export const signalRequest = schemaFor<SignalRequest>()({ type: "object", properties: { … }, required: ["name"] });
 *
 * does not compile, and names the place, when
 * - an object schema's `properties` leaves out a property of the type, or has one the type has not;
 * - its `required` leaves out a required property, or names an optional one;
 * - a `type` leaves out a kind of value the type allows (the number of `string | number`), or allows one it does not;
 * - an `enum` holds a value the type does not, or a type made of string literals has no `enum`;
 * - an `items` or `additionalProperties` schema does not match the type of the values it describes.
 * An object schema without `properties` (`{ type: "object" }`), or an array schema without
 * `items`, says nothing of what is inside (a journal entry, a pinned toolset: their types say it);
 * keywords that only narrow (`minLength`, `maximum`, `pattern`…) are the schema's alone.
 */

/** A JSON Schema, as the server's validator (ajv, strict) and the OpenAPI document take it. */
export interface JsonSchemaObject {
  readonly [keyword: string]: unknown;
}

/**
 * The schema, unchanged, once the compiler has checked it against `T`. A mismatch is a compile
 * error on the schema, whose message lists each difference (`schema.caller.seq: …`).
 */
export function schemaFor<T>(): <const S extends JsonSchemaObject>(schema: S & Checked<T, S>) => S {
  return (schema) => schema;
}

/** The differences between `T` and the schema `S`, one sentence each; `never` when they match. */
export type SchemaMismatch<T, S> = Mismatch<T, S, "schema">;

type Checked<T, S> = [SchemaMismatch<T, S>] extends [never] ? unknown : { readonly "this schema does not match its type": Spelled<SchemaMismatch<T, S>> };
/** Each sentence made anew, so that the compiler's message spells them out rather than naming the types that make them. */
type Spelled<U> = U extends string ? `- ${U}` : never;

/** The kinds of JSON value ("integer" is a number). */
type JsonKind = "string" | "number" | "boolean" | "null" | "array" | "object";

/** The kinds of JSON value a TypeScript type holds. */
type KindOf<T> = T extends string
  ? "string"
  : T extends number
    ? "number"
    : T extends boolean
      ? "boolean"
      : T extends null
        ? "null"
        : T extends readonly unknown[]
          ? "array"
          : T extends object
            ? "object"
            : never;

/** The kinds a schema's `type` (a name or a list of names) allows. */
type KindAllowed<N> = AsKind<N extends readonly (infer E)[] ? E : N>;
type AsKind<K> = K extends "integer" ? "number" : K;

type Mismatch<T, S, P extends string> = unknown extends T
  ? never // Any value at all: nothing to compare.
  : S extends { readonly type: infer N }
    ? KindMismatch<T, N, P> | EnumMismatch<T, S, P> | ArrayMismatch<T, S, P> | ObjectMismatch<T, S, P>
    : [Exclude<JsonKind, KindOf<T>>] extends [never]
      ? never // Any JSON value, and a schema that allows any.
      : `${P}: its schema has no \`type\``;

type KindMismatch<T, N, P extends string> =
  | `${P}: its type holds ${Exclude<KindOf<T>, KindAllowed<N>>} values, which its schema's \`type\` refuses`
  | `${P}: its schema's \`type\` allows ${Exclude<KindAllowed<N>, KindOf<T>> & string} values, which its type does not hold`;

type EnumMismatch<T, S, P extends string> = S extends { readonly enum: readonly (infer E)[] }
  ? `${P}: its schema's \`enum\` holds ${Exclude<E, T> & (string | number | boolean)}, which its type does not`
  : IsLiteralUnion<Extract<T, string>> extends true
    ? `${P}: its type is a union of string literals, which its schema does not list (\`enum\`)`
    : never;

type IsLiteralUnion<U> = [U] extends [never] ? false : string extends U ? false : true;

type ArrayMismatch<T, S, P extends string> = [Extract<T, readonly unknown[]>] extends [never]
  ? never
  : S extends { readonly items: infer I }
    ? Mismatch<Extract<T, readonly unknown[]>[number], I, `${P}[]`>
    : never;

type ObjectMismatch<T, S, P extends string> = [ObjectPart<T>] extends [never] ? never : PropertiesMismatch<ObjectPart<T>, S, P>;

/** The object types of `T`, arrays aside. */
type ObjectPart<T> = Exclude<Extract<T, object>, readonly unknown[]>;

type PropertiesMismatch<O, S, P extends string> =
  | (S extends { readonly properties: infer Props }
      ? | `${P}.${Exclude<NamedKey<O>, keyof Props> & string}: a property of its type that its schema's \`properties\` leaves out`
        | ([IndexKey<O>] extends [never] ? `${P}.${Exclude<keyof Props, NamedKey<O>> & string}: in its schema's \`properties\`, not in its type` : never)
        | RequiredMismatch<O, S, P>
        | { [K in keyof Props]: [ValueOf<O, K>] extends [never] ? never : Mismatch<ValueOf<O, K>, Props[K], `${P}.${K & string}`> }[keyof Props]
      : never)
  | (S extends { readonly additionalProperties: infer A } ? (A extends boolean ? never : Mismatch<ValueOf<O, IndexKey<O>>, A, `${P}[key]`>) : never);

type RequiredMismatch<O, S, P extends string> =
  | `${P}: its schema's \`required\` leaves out ${Exclude<RequiredKey<O>, RequiredIn<S>> & string}`
  | `${P}: its schema's \`required\` names ${Exclude<RequiredIn<S>, RequiredKey<O>> & string}, which its type makes optional`;

type RequiredIn<S> = S extends { readonly required: readonly (infer K)[] } ? K : never;

/** Every key of every member of a union of object types. */
type AnyKey<O> = O extends unknown ? keyof O : never;

/** Keys written out (`name`), not an index signature's (`[key: string]`, `` [label: `label.${string}`] ``). */
type NamedKey<O> = { [K in AnyKey<O>]: NoKeys extends Record<K, unknown> ? never : K }[AnyKey<O>];
type IndexKey<O> = Exclude<AnyKey<O>, NamedKey<O>>;

/** The keys every member of the union requires. */
type RequiredKey<O> = { [K in NamedKey<O>]: [RequiredInEach<O, K>] extends [true] ? K : never }[NamedKey<O>];
type RequiredInEach<O, K> = O extends unknown ? (K extends keyof O ? (NoKeys extends Pick<O, K> ? false : true) : false) : never;

/** An object without keys: it fits an index signature, and a type whose keys are all optional. */
type NoKeys = Record<never, never>;

/** What a property holds in any member of the union (absent: `undefined`, which JSON has not). */
type ValueOf<O, K> = Exclude<O extends unknown ? (K extends keyof O ? O[K] : never) : never, undefined>;
