import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "../json.js";
import type { ToolsetSpec } from "../toolset.js";
import type { createToolsetRequest } from "./toolsets.js";
import { schemaFor, type SchemaMismatch } from "./schema-for.js";

/**
 * `schemaFor`: a schema that does not describe its type does not compile. Each `@ts-expect-error`
 * below is a schema that must be refused: if the checker let it through, the directive itself
 * would fail the build (`npm run check`), so these cases fail when the checker stops catching them.
 */

interface Start {
  readonly toolset: string;
  readonly source: string;
  readonly input?: JsonValue;
  readonly ttl?: string | number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly status?: "queued" | "running";
  readonly caller?: { readonly run: string; readonly seq: number };
  readonly tags?: readonly string[];
}

const PROPERTIES = {
  toolset: { type: "string" },
  source: { type: "string" },
  input: {},
  ttl: { type: ["string", "integer"] },
  labels: { type: "object", additionalProperties: { type: "string" } },
  status: { type: "string", enum: ["queued", "running"] },
  caller: { type: "object", properties: { run: { type: "string" }, seq: { type: "integer" } }, required: ["run", "seq"] },
  tags: { type: "array", items: { type: "string" } },
} as const;

/** Compares two types exactly. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function typeIs<T extends true>(): T | undefined {
  return undefined;
}

describe("schemaFor", () => {
  it("answers a schema that describes its type unchanged", () => {
    const schema = { type: "object", properties: PROPERTIES, required: ["toolset", "source"], additionalProperties: false } as const;
    assert.equal(schemaFor<Start>()(schema), schema);
  });

  it("refuses properties left out or added, and a `required` that does not say which properties are", () => {
    const { input: _input, ...withoutInput } = PROPERTIES;
    // @ts-expect-error `input` is a property of Start.
    schemaFor<Start>()({ type: "object", properties: withoutInput, required: ["toolset", "source"] });
    // @ts-expect-error Start has no `extra`.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, extra: { type: "string" } }, required: ["toolset", "source"] });
    // @ts-expect-error `source` is required.
    schemaFor<Start>()({ type: "object", properties: PROPERTIES, required: ["toolset"] });
    // @ts-expect-error `input` is optional.
    schemaFor<Start>()({ type: "object", properties: PROPERTIES, required: ["toolset", "source", "input"] });
    // @ts-expect-error `caller.seq` is required inside `caller`.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, caller: { ...PROPERTIES.caller, required: ["run"] } }, required: ["toolset", "source"] });
  });

  it("refuses a `type`, `enum`, `items` or `additionalProperties` that does not fit the values", () => {
    // @ts-expect-error `ttl` may be a number.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, ttl: { type: "string" } }, required: ["toolset", "source"] });
    // @ts-expect-error `source` is never a number.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, source: { type: ["string", "integer"] } }, required: ["toolset", "source"] });
    // @ts-expect-error `status` is one of two literals: the schema must list them.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, status: { type: "string" } }, required: ["toolset", "source"] });
    // @ts-expect-error `done` is not a status.
    schemaFor<Start>()({
      type: "object",
      properties: { ...PROPERTIES, status: { type: "string", enum: ["queued", "done"] } },
      required: ["toolset", "source"],
    });
    // @ts-expect-error tags are strings.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, tags: { type: "array", items: { type: "integer" } } }, required: ["toolset", "source"] });
    // @ts-expect-error label values are strings.
    schemaFor<Start>()({
      type: "object",
      properties: { ...PROPERTIES, labels: { type: "object", additionalProperties: { type: "boolean" } } },
      required: ["toolset", "source"],
    });
    // @ts-expect-error a string needs a `type`: only a value that may be any JSON may go without.
    schemaFor<Start>()({ type: "object", properties: { ...PROPERTIES, source: {} }, required: ["toolset", "source"] });
  });

  it("says each difference in a sentence that names the place", () => {
    typeIs<
      Equal<
        SchemaMismatch<
          Start,
          { type: "object"; properties: Omit<typeof PROPERTIES, "caller"> & { caller: { type: "object"; properties: { run: { type: "string" } } } } }
        >,
        | "schema: its schema's `required` leaves out toolset"
        | "schema: its schema's `required` leaves out source"
        | "schema.caller.seq: a property of its type that its schema's `properties` leaves out"
        | "schema.caller: its schema's `required` leaves out run"
        | "schema.caller: its schema's `required` leaves out seq"
      >
    >();
  });

  it("keeps the API's toolset body to what the server takes: a ToolsetSpec without `base`", () => {
    typeIs<Equal<SchemaMismatch<ToolsetSpec, typeof createToolsetRequest>, "schema.base: a property of its type that its schema's `properties` leaves out">>();
  });
});
