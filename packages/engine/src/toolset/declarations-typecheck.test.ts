import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import ts from "typescript";
import type { JsonSchema, JsonValue, PinnedTool } from "@tapedeck/protocol";
import { renderDeclarations } from "./declarations.js";
import { schemaToType } from "./schema-to-type.js";

// The generated `.d.ts` as the TypeScript compiler sees it: scripts that use the tools well
// compile, scripts that misuse them do not, and no schema makes the declarations invalid.

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  lib: ["lib.es2022.d.ts"],
  types: [],
};

const host = ts.createCompilerHost(OPTIONS);
const libCache = new Map<string, ts.SourceFile | undefined>();

/** Diagnostics of compiling `script` against `declarations`, as `file:line: message`. */
function typeCheck(declarations: string, script: string): string[] {
  const files = new Map([
    ["/virtual/tools.d.ts", declarations],
    ["/virtual/script.ts", script],
  ]);
  const program = ts.createProgram([...files.keys()], OPTIONS, {
    ...host,
    fileExists: (name) => files.has(name) || host.fileExists(name),
    readFile: (name) => files.get(name) ?? host.readFile(name),
    getSourceFile: (name, version) => {
      const text = files.get(name);
      if (text !== undefined) return ts.createSourceFile(name, text, version);
      if (!libCache.has(name)) libCache.set(name, host.getSourceFile(name, version));
      return libCache.get(name);
    },
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName ?? ""}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

function tool(group: string, name: string, fields: Partial<PinnedTool>): PinnedTool {
  return {
    group,
    name,
    source: "mcp",
    description: "",
    inputSchema: true,
    policy: { onInterruption: "retry", timeoutMs: 300_000, heartbeatTimeoutMs: 60_000, concurrency: 16, approval: false },
    ...fields,
  };
}

/** A GitHub-like toolset, written the way MCP servers write schemas: `$defs`, refs, enums, nullables. */
const github: PinnedTool[] = [
  tool("github", "list_issues", {
    description: "List the issues of a repository, newest first.",
    inputSchema: {
      type: "object",
      properties: {
        repo: { type: "string", description: "The repository, as `owner/name`." },
        state: { $ref: "#/$defs/State" },
        labels: { type: "array", items: { type: "string" }, description: "Only issues with all these labels." },
        per_page: { type: "integer", minimum: 1, maximum: 100 },
      },
      required: ["repo"],
      additionalProperties: false,
      $defs: { State: { type: "string", enum: ["open", "closed", "all"], description: "Default `open`." } },
    },
    outputSchema: {
      type: "array",
      items: { $ref: "#/$defs/Issue" },
      $defs: {
        Issue: {
          type: "object",
          properties: {
            number: { type: "integer" },
            title: { type: "string" },
            state: { enum: ["open", "closed"] },
            labels: { type: "array", items: { $ref: "#/$defs/Label" } },
            assignee: { anyOf: [{ $ref: "#/$defs/User" }, { type: "null" }] },
          },
          required: ["number", "title", "state", "labels", "assignee"],
        },
        Label: { type: "object", properties: { name: { type: "string" }, color: { type: "string" } }, required: ["name"] },
        User: { type: "object", properties: { login: { type: "string" } }, required: ["login"] },
      },
    },
  }),
  tool("github", "get_comment_thread", {
    description: "A comment and its replies, recursively.",
    inputSchema: { type: "object", properties: { repo: { type: "string" }, id: { type: "integer" } }, required: ["repo", "id"] },
    outputSchema: {
      $ref: "#/definitions/Comment",
      definitions: {
        Comment: {
          type: "object",
          properties: { body: { type: "string" }, replies: { type: "array", items: { $ref: "#/definitions/Comment" } } },
          required: ["body", "replies"],
        },
      },
    },
  }),
  tool("github", "create-issue", {
    description: "Open an issue.",
    inputSchema: {
      type: "object",
      properties: { repo: { type: "string" }, title: { type: "string" }, body: { type: ["string", "null"] } },
      required: ["repo", "title"],
    },
    outputSchema: { type: "object", properties: { number: { type: "integer" }, url: { type: "string" } }, required: ["number", "url"] },
  }),
  tool("slack", "post_message", {
    description: "Post a message to a channel.\nMarkdown is supported.",
    inputSchema: {
      type: "object",
      properties: {
        channel: { type: "string" },
        text: { type: "string" },
        blocks: {
          type: "array",
          items: {
            oneOf: [
              { type: "object", properties: { type: { const: "section" }, text: { type: "string" } }, required: ["type", "text"] },
              { type: "object", properties: { type: { const: "divider" } }, required: ["type"] },
            ],
          },
        },
      },
      required: ["channel", "text"],
    },
  }),
  tool("slack", "auth_test", { description: "Check the token.", inputSchema: { type: "object", properties: {} } }),
];

const { typescript, prompt } = renderDeclarations(github);

const GOOD_SCRIPT = `
import { github, slack, ToolError } from "tapedeck:tools";
const issues = await github.list_issues({ repo: "octo/hello", state: "open", labels: ["bug"] });
for (const issue of issues) {
  const who: string = issue.assignee?.login ?? "nobody";
  if (issue.labels.some((label) => label.name === "bug")) {
    await slack.post_message({ channel: "#bugs", text: \`#\${issue.number} \${issue.title} (\${who})\`, blocks: [{ type: "divider" }] });
  }
}
const thread = await github.get_comment_thread({ repo: "octo/hello", id: 1 });
console.log(thread.body, thread.replies.length);
try {
  const created = await github["create-issue"]({ repo: "octo/hello", title: "Flaky", body: null });
  console.log(created.url.toUpperCase());
} catch (error) {
  if (error instanceof ToolError && error.retryable === true) console.log(error.code, error.tool, error.seq);
}
await slack.auth_test();
`;

void describe("the generated .d.ts", () => {
  void it("compiles a script that uses the tools correctly", () => {
    assert.deepEqual(typeCheck(typescript, `declare const console: { log(...a: unknown[]): void };\n${GOOD_SCRIPT}`), []);
  });

  const misuses: [string, string][] = [
    ["a wrong argument type", `await github.list_issues({ repo: 42 });`],
    ["a missing required property", `await github.list_issues({ state: "open" });`],
    ["a wrong enum value", `await github.list_issues({ repo: "a/b", state: "merged" });`],
    ["an unknown property", `await github.list_issues({ repo: "a/b", page: 2 });`],
    ["missing args", `await github["create-issue"]();`],
    ["a wrong oneOf branch", `await slack.post_message({ channel: "c", text: "t", blocks: [{ type: "image" }] });`],
    ["a result used wrongly", `const n: string = (await github.list_issues({ repo: "a/b" }))[0]!.number;`],
    ["an unknown tool", `await github.delete_repo({ repo: "a/b" });`],
  ];
  for (const [name, line] of misuses) {
    void it(`rejects ${name}`, () => {
      const errors = typeCheck(typescript, `import { github, slack } from "tapedeck:tools";\nvoid slack;\n${line}\n`);
      assert.ok(errors.length > 0, "expected a type error");
      assert.ok(
        errors.every((e) => e.startsWith("/virtual/script.ts:3:")),
        errors.join("\n"),
      );
    });
  }

  void it("is readable: the prompt of a realistic toolset", () => {
    assert.equal(
      prompt,
      [
        'import { github, slack } from "tapedeck:tools";',
        'github["create-issue"]({ repo: string, title: string, body?: string | null }) → { number: number, url: string } · Open an issue.',
        "github.get_comment_thread({ repo: string, id: number }) → { body: string, replies: unknown[] } · A comment and its replies, recursively.",
        'github.list_issues({ repo: string, state?: "open" | "closed" | "all", labels?: string[], per_page?: number }) → { number: number, title: string, state: "open" | "closed", labels: { name: string, color?: string }[], assignee: { login: string } | null }[] · List the issues of a repository, newest first.',
        "slack.auth_test() → unknown · Check the token.",
        'slack.post_message({ channel: string, text: string, blocks?: ({ type: "section", text: string } | { type: "divider" })[] }) → unknown · Post a message to a channel.',
        'sleep(duration) · Built-in: durable wait, ms or "30s" "2h" "10d"; the run holds nothing meanwhile.',
        "signal<T>(name, { timeout? }) → T · Built-in: waits for the signal `name` sent to the run (kept if sent earlier).",
        "webhook(name) → { url } · Built-in: a URL bound to this run; a POST of JSON to it is signal(name).",
      ].join("\n"),
    );
  });
});

const AWKWARD_NAMES = ["a", "b-c", "1st", "$x", "with space", 'quote"d', "constructor", "*/", ""];
const AWKWARD_TEXT = ["plain", "ends */ early", "two\nlines", 'a "quote"', "back\\slash"];

/** Schemas using every keyword the renderer knows, with refs into `$defs` `A` and `B` (some recursive). */
const { schema: schemaArb } = fc.letrec<{ schema: JsonSchema }>((tie) => {
  const sub = tie("schema");
  const subs = fc.array(sub, { minLength: 1, maxLength: 3 });
  const described = fc
    .tuple(sub, fc.option(fc.constantFrom(...AWKWARD_TEXT), { nil: undefined }))
    .map(([s, doc]): JsonSchema => (doc === undefined || typeof s === "boolean" ? s : { ...s, description: doc }));
  const object = fc.record(
    {
      type: fc.constantFrom<JsonValue>("object", ["object", "null"]),
      properties: fc.dictionary(fc.constantFrom(...AWKWARD_NAMES), described, { maxKeys: 4 }),
      required: fc.subarray(AWKWARD_NAMES),
      additionalProperties: sub,
    },
    { requiredKeys: ["type", "properties"] },
  );
  const leaf = fc.constantFrom<JsonSchema>(true, false, { type: "string" }, { type: "integer" }, { type: "null" }, { enum: AWKWARD_TEXT }, { const: -1 });
  const ref = fc.constantFrom("#/$defs/A", "#/$defs/B", "#", "#/$defs/missing", "https://example.com/s.json");
  const schemas: fc.Arbitrary<JsonSchema>[] = [
    leaf,
    fc.record({ type: fc.constant("array"), items: sub }),
    fc.record({ prefixItems: subs, minItems: fc.nat(3), items: sub }, { requiredKeys: ["prefixItems"] }),
    object,
    fc.record({ anyOf: subs }),
    fc.record({ oneOf: subs, nullable: fc.boolean() }),
    fc.record({ allOf: subs }),
    fc.record({ $ref: ref }),
  ];
  return { schema: fc.oneof({ depthSize: "small" }, ...schemas) };
});

const toolArb = fc.record({ root: schemaArb, A: schemaArb, B: schemaArb, name: fc.constantFrom(...AWKWARD_NAMES), doc: fc.constantFrom(...AWKWARD_TEXT) });

void describe("declarations of random schemas", () => {
  void it("always compile, in both styles", () => {
    const property = fc.property(fc.array(toolArb, { minLength: 1, maxLength: 30 }), (drawn) => {
      const tools = drawn.map(({ root, A, B, name, doc }, i) => {
        const inputSchema = typeof root === "boolean" ? root : { ...root, $defs: { A, B } };
        return tool(`g${i % 3}`, `${name}${i}`, { inputSchema, outputSchema: inputSchema, description: doc });
      });
      assert.deepEqual(typeCheck(renderDeclarations(tools).typescript, "export {};"), []);
      // The prompt style is meant for reading, but it is still TypeScript syntax.
      const aliases = tools.map((t, i) => `type T${i} = ${schemaToType(t.inputSchema, { style: "prompt" })};`).join("\n");
      const syntax = ts.transpileModule(aliases, { reportDiagnostics: true }).diagnostics ?? [];
      assert.deepEqual(
        syntax.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
        [],
      );
    });
    fc.assert(property, { numRuns: 20 });
  });
});
