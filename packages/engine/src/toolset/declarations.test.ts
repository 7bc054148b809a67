import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JsonSchema, PinnedTool } from "@tapedeck/protocol";
import { DECLARATIONS_MODULE, renderDeclarations } from "./declarations.js";
import { schemaToType } from "./schema-to-type.js";

// What the renderings say, as exact text. That they compile is `declarations-typecheck.test.ts`.

const prompt = (schema: JsonSchema): string => schemaToType(schema, { style: "prompt" });
const ts = (schema: JsonSchema): string => schemaToType(schema, { style: "ts" });

function tool(group: string, name: string, fields: Partial<PinnedTool> = {}): PinnedTool {
  return {
    group,
    name,
    source: "host",
    description: "",
    inputSchema: { type: "object", properties: {} },
    policy: { onInterruption: "retry", timeoutMs: 300_000, heartbeatTimeoutMs: 60_000, concurrency: 16, approval: false },
    ...fields,
  };
}

void describe("schemaToType", () => {
  const cases: [string, JsonSchema, string][] = [
    ["string", { type: "string" }, "string"],
    ["number", { type: "number" }, "number"],
    ["integer", { type: "integer" }, "number"],
    ["boolean", { type: "boolean" }, "boolean"],
    ["null", { type: "null" }, "null"],
    ["a type named like an Object.prototype member (a server's schema)", { type: "constructor" }, "unknown"],
    ["true schema", true, "unknown"],
    ["empty schema", {}, "unknown"],
    ["false schema", false, "never"],
    ["type array", { type: ["string", "integer", "null"] }, "string | number | null"],
    ["nullable (OpenAPI)", { type: "string", nullable: true }, "string | null"],
    ["enum", { type: "string", enum: ["open", "closed", 'say "hi"'] }, '"open" | "closed" | "say \\"hi\\""'],
    ["mixed enum", { enum: [1, -2, true, null, "x"] }, '1 | -2 | true | null | "x"'],
    ["const", { const: "v1" }, '"v1"'],
    ["const object", { const: { a: [1, "b"] } }, '{"a":[1,"b"]}'],
    ["array", { type: "array", items: { type: "string" } }, "string[]"],
    ["array of union", { type: "array", items: { type: ["string", "number"] } }, "(string | number)[]"],
    ["array without items", { type: "array" }, "unknown[]"],
    ["array of arrays", { items: { items: { type: "boolean" } } }, "boolean[][]"],
    ["prefixItems", { prefixItems: [{ type: "number" }, { type: "string" }], items: false }, "[number, string]"],
    ["prefixItems + rest", { prefixItems: [{ type: "number" }], items: { type: "string" } }, "[number, ...string[]]"],
    ["prefixItems, open", { prefixItems: [{ type: "number" }] }, "[number, ...unknown[]]"],
    ["prefixItems + minItems", { prefixItems: [{ type: "number" }, { enum: ["a", "b"] }], minItems: 1, items: false }, '[number, ("a" | "b")?]'],
    ["draft-07 tuple", { items: [{ type: "string" }], additionalItems: false }, "[string]"],
    ["anyOf", { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }, "string | string[]"],
    ["oneOf flattens", { oneOf: [{ enum: ["a", "b"] }, { enum: ["b", "c"] }] }, '"a" | "b" | "c"'],
    ["anyOf with unknown", { anyOf: [{ type: "string" }, {}] }, "unknown"],
    [
      "allOf",
      { allOf: [{ properties: { a: { type: "string" } } }, { properties: { b: { anyOf: [{ type: "number" }, { type: "null" }] } } }] },
      "{ a?: string } & { b?: number | null }",
    ],
    [
      "allOf of union",
      { type: "object", properties: { a: { type: "string" } }, anyOf: [{ type: "object" }, { type: "null" }] },
      "{ a?: string } & ({ [key: string]: unknown } | null)",
    ],
    [
      "oneOf branches that only require",
      { type: "object", properties: { a: { type: "string" } }, oneOf: [{ required: ["a"] }, { required: ["b"] }] },
      "{ a?: string }",
    ],
    ["object", { type: "object", properties: { repo: { type: "string" }, n: { type: "integer" } }, required: ["repo"] }, "{ repo: string, n?: number }"],
    [
      "quoted keys",
      { properties: { "a-b": { type: "string" }, "1x": true, $ok: true, "": true }, required: ["a-b"] },
      '{ "a-b": string, "1x"?: unknown, $ok?: unknown, ""?: unknown }',
    ],
    ["open object", { type: "object" }, "{ [key: string]: unknown }"],
    ["closed empty object", { type: "object", additionalProperties: false }, "{}"],
    ["no properties", { type: "object", properties: {} }, "{}"],
    ["additionalProperties: true", { properties: { a: { type: "string" } }, additionalProperties: true }, "{ a?: string, [key: string]: unknown }"],
    ["additionalProperties schema", { type: "object", additionalProperties: { type: "number" } }, "{ [key: string]: number }"],
    ["patternProperties", { type: "object", patternProperties: { "^x-": { type: "string" } } }, "{ [key: string]: string }"],
    ["nested", { properties: { user: { type: "object", properties: { login: { type: "string" } }, required: ["login"] } } }, "{ user?: { login: string } }"],
    ["nullable object", { type: ["object", "null"], properties: { a: { type: "string" } } }, "{ a?: string } | null"],
    ["network $ref", { $ref: "https://example.com/schema.json" }, "unknown"],
    ["missing $ref", { $ref: "#/$defs/Nope" }, "unknown"],
    ["unknown type", { type: "bigint" }, "unknown"],
    ["unknown keywords", { not: { type: "string" } }, "unknown"],
  ];
  for (const [name, schema, expected] of cases) {
    void it(`renders ${name}`, () => assert.equal(prompt(schema), expected));
  }

  void it("resolves local refs to $defs, definitions and JSON pointers", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        state: { $ref: "#/$defs/State" },
        user: { $ref: "#/definitions/User" },
        also: { $ref: "#/properties/state" },
        odd: { $ref: "#/$defs/a~1b%20c" },
      },
      $defs: { State: { enum: ["open", "closed"] }, "a/b c": { type: "boolean" } },
      definitions: { User: { type: "object", properties: { login: { type: "string" } }, required: ["login"] } },
    };
    assert.equal(prompt(schema), '{ state?: "open" | "closed", user?: { login: string }, also?: "open" | "closed", odd?: boolean }');
  });

  void it("renders a recursive ref as unknown where it recurs", () => {
    const tree: JsonSchema = {
      $ref: "#/$defs/Node",
      $defs: {
        Node: { type: "object", properties: { value: { type: "number" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["value"] },
      },
    };
    assert.equal(prompt(tree), "{ value: number, children?: unknown[] }");
    const self: JsonSchema = { type: "object", properties: { next: { $ref: "#" } } };
    assert.equal(prompt(self), "{ next?: { next?: unknown } }");
    const mutual: JsonSchema = {
      $ref: "#/$defs/A",
      $defs: { A: { properties: { b: { $ref: "#/$defs/B" } } }, B: { properties: { a: { $ref: "#/$defs/A" } } } },
    };
    assert.equal(prompt(mutual), "{ b?: { a?: unknown } }");
  });

  void it("resolves refs against the given root when rendering a subschema", () => {
    const root: JsonSchema = { $defs: { Id: { type: "integer" } } };
    assert.equal(schemaToType({ type: "array", items: { $ref: "#/$defs/Id" } }, { style: "prompt", root }), "number[]");
  });

  void it("bounds the output of deep and fanning-out schemas", () => {
    let deep: JsonSchema = { type: "string" };
    for (let i = 0; i < 200; i++) deep = { type: "array", items: deep };
    assert.match(prompt(deep), /^unknown(\[\]){30,}$/);
    // Each def refers twice to the next: 2^40 paths if inlined without a budget.
    const $defs: { [name: string]: JsonSchema } = { D40: { type: "string" } };
    for (let i = 0; i < 40; i++) $defs[`D${i}`] = { properties: { l: { $ref: `#/$defs/D${i + 1}` }, r: { $ref: `#/$defs/D${i + 1}` } } };
    assert.ok(prompt({ $ref: "#/$defs/D0", $defs }).length < 1_000_000);
  });

  void it("writes property descriptions as JSDoc in ts style, one line when there are none", () => {
    assert.equal(ts({ properties: { a: { type: "string" } }, required: ["a"] }), "{ a: string }");
    const schema: JsonSchema = {
      type: "object",
      properties: {
        repo: { type: "string", description: "Repository, `owner/name`." },
        filter: {
          type: "object",
          description: "Which issues.\nAll of them by default; ends */ here.",
          properties: { labels: { type: "array", items: { type: "string" }, description: "Labels, all required." } },
        },
        "per-page": { type: "integer" },
      },
      required: ["repo"],
    };
    assert.equal(
      schemaToType(schema, { style: "ts", indent: "  " }),
      [
        "{",
        "    /** Repository, `owner/name`. */",
        "    repo: string;",
        "    /**",
        "     * Which issues.",
        "     * All of them by default; ends *\\/ here.",
        "     */",
        "    filter?: {",
        "      /** Labels, all required. */",
        "      labels?: string[];",
        "    };",
        '    "per-page"?: number;',
        "  }",
      ].join("\n"),
    );
    assert.equal(prompt(schema), '{ repo: string, filter?: { labels?: string[] }, "per-page"?: number }');
  });

  void it("widens a ts index signature that the named properties do not fit", () => {
    const fits: JsonSchema = { properties: { a: { type: "number" } }, additionalProperties: { type: "number" } };
    assert.equal(ts(fits), "{ a?: number; [key: string]: number | undefined }");
    const mixed: JsonSchema = { properties: { a: { type: "string" } }, required: ["a"], additionalProperties: { type: "number" } };
    assert.equal(ts(mixed), "{ a: string; [key: string]: unknown }");
    assert.equal(prompt(mixed), "{ a: string, [key: string]: number }");
  });
});

void describe("renderDeclarations", () => {
  const tools = [
    tool("slack", "post", {
      description: "Post a message.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    }),
    tool("github", "list_issues", {
      description: "List the issues of a repository. Newest first.\n\nPaginated: see `page`. Never */ closes.",
      inputSchema: {
        type: "object",
        properties: { repo: { type: "string" }, state: { type: "string", enum: ["open", "closed"] } },
        required: ["repo"],
      },
      outputSchema: { type: "array", items: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] } },
    }),
    tool("github", "list-prs", { inputSchema: { type: "object", properties: { repo: { type: "string" } } } }),
    tool("github", "ping"),
  ];

  void it("renders one ambient module, groups and tools sorted", () => {
    const { typescript } = renderDeclarations(tools);
    const expected = [
      `declare module "${DECLARATIONS_MODULE}" {`,
      "  /** Tools of group `github`. */",
      "  export const github: {",
      '    "list-prs"(args?: { repo?: string }): Promise<unknown>;',
      "    /**",
      "     * List the issues of a repository. Newest first.",
      "     *",
      "     * Paginated: see `page`. Never *\\/ closes.",
      "     */",
      '    list_issues(args: { repo: string; state?: "open" | "closed" }): Promise<{ number: number }[]>;',
      "    ping(args?: {}): Promise<unknown>;",
      "  };",
      "  /** Tools of group `slack`. */",
      "  export const slack: {",
      "    /** Post a message. */",
      "    post(args: { text: string }): Promise<unknown>;",
      "  };",
    ].join("\n");
    assert.ok(typescript.startsWith(`${expected}\n  /**\n   * A failed tool call.`), typescript);
    assert.match(typescript, /export class ToolError extends Error \{/);
    assert.ok(typescript.endsWith("  }\n}\n"));
  });

  void it("renders the prompt: an import line, one line per tool, then the built-in waits", () => {
    assert.equal(
      renderDeclarations(tools).prompt,
      [
        'import { github, slack } from "tapedeck:tools";',
        'github["list-prs"]({ repo?: string }) → unknown',
        'github.list_issues({ repo: string, state?: "open" | "closed" }) → { number: number }[] · List the issues of a repository.',
        "github.ping() → unknown",
        "slack.post({ text: string }) → unknown · Post a message.",
        'sleep(duration) · Built-in: durable wait, ms or "30s" "2h" "10d"; the run holds nothing meanwhile.',
        "signal<T>(name, { timeout? }) → T · Built-in: waits for the signal `name` sent to the run (kept if sent earlier).",
        "webhook(name) → { url } · Built-in: a URL bound to this run; a POST of JSON to it is signal(name).",
      ].join("\n"),
    );
  });

  void it("says which tools need a person's approval, in the JSDoc and before the prompt line's summary", () => {
    const refund = tool("crm", "refund_order", { description: "Refunds an order in full.", policy: { ...tools[0]!.policy, approval: true } });
    const { typescript, prompt } = renderDeclarations([refund, tool("crm", "find_customer", { description: "Finds a customer." })]);
    assert.deepEqual(prompt.split("\n").slice(1, 3), [
      "crm.find_customer() → unknown · Finds a customer.",
      "crm.refund_order() → unknown · Needs a person's approval: each call waits for it (the run holds nothing meanwhile) · Refunds an order in full.",
    ]);
    assert.ok(
      typescript.includes(
        [
          "    /**",
          "     * Refunds an order in full.",
          "     *",
          '     * @approval Each call waits for a person to approve it before it is sent; the run holds nothing meanwhile. A rejected call throws ToolError "approval_rejected" (it was not sent).',
          "     */",
          "    refund_order(args?: {}): Promise<unknown>;",
        ].join("\n"),
      ),
      typescript,
    );
    assert.ok(
      typescript.includes("    /** Finds a customer. */\n    find_customer(args?: {}): Promise<unknown>;"),
      "a tool without approval says nothing of it",
    );
  });

  void it("keeps args required when the schema requires something", () => {
    const [line] = renderDeclarations([
      tool("g", "t", { inputSchema: { type: "object", allOf: [{ required: ["a"] }], properties: { a: { type: "string" } } } }),
    ])
      .typescript.split("\n")
      .filter((l) => l.includes("t(args"));
    assert.equal(line, "    t(args: { a?: string }): Promise<unknown>;");
  });

  void it("summarizes long descriptions on one line", () => {
    const summary = (description: string): string =>
      renderDeclarations([tool("g", "t", { description })])
        .prompt.split("\n")[1]
        ?.replace("g.t() → unknown · ", "") ?? "";
    assert.equal(summary("  Fetch   a\n  page, e.g. the front one.\nThen stop.  "), "Fetch a page, e.g. the front one.");
    assert.equal(summary("Version v1.2 of it! Later more."), "Version v1.2 of it!");
    const long = summary(`${"word ".repeat(60)}end.`);
    assert.ok(long.length <= 160 && long.endsWith("word…"), long);
    assert.equal(summary(""), "g.t() → unknown");
  });
});
