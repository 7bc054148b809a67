import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ToolError } from "@tapedeck/protocol";
import { Ajv2020 } from "ajv/dist/2020.js";
import { protectedName } from "../toolset/protected-names.js";
import { callLibraryTool } from "./call-library-tool.js";
import { defineTool, type LibraryTool } from "./library-tool.js";
import { LIBRARY_GROUP_NAMES, LIBRARY_PROTECTED_NAMES, libraryGroupTools, type LibraryHost } from "./library-groups.js";
import { bubblewrapForTests } from "./shell/test-support/needs-bubblewrap.js";
import { baseContext } from "./test-support/call-tool.js";
import { definitionProblems, type ToolDefinition } from "./tool-definition.js";

// Every group is offered only where the shell can run (see needs-bubblewrap.ts).
const bubblewrap = await bubblewrapForTests();
const host = (): Promise<LibraryHost> =>
  bubblewrap.skip === undefined ? Promise.resolve({ shell: bubblewrap.probe, embeddings: false }) : Promise.reject(new Error(bubblewrap.skip));

async function allTools(): Promise<{ group: string; tool: LibraryTool }[]> {
  const found = [];
  const h = await host();
  for (const group of LIBRARY_GROUP_NAMES) {
    const tools = libraryGroupTools(group, {}, h);
    assert.ok(tools.ok, `${group}: ${tools.ok ? "" : tools.reason}`);
    found.push(...tools.tools.map((tool) => ({ group, tool })));
  }
  return found;
}

void describe("the library", { skip: bubblewrap.skip ?? false }, () => {
  it("every tool's definition is well formed, its schemas compile, and names are unique in their group", async () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false, strictTypes: false });
    const tools = await allTools();
    assert.deepEqual(
      tools.map(({ group, tool }) => `${group}.${tool.name}`),
      [
        "echo.echo",
        "time.now",
        "json.parse",
        "json.stringify",
        "json.query",
        "json.validate",
        "web.fetch",
        "files.read",
        "files.write",
        "files.list",
        "files.patch",
        "shell.run",
        "memory.write",
        "memory.read",
        "memory.tree",
        "memory.search",
      ],
    );
    for (const { group, tool } of tools) {
      assert.deepEqual(definitionProblems(tool), [], `${group}.${tool.name}`);
      assert.doesNotThrow(() => ajv.compile(tool.inputSchema), `${group}.${tool.name} input`);
      if (tool.outputSchema) assert.doesNotThrow(() => ajv.compile(tool.outputSchema!), `${group}.${tool.name} output`);
    }
  });

  it("only tools that change or run things ask or carry high risk; writers and the shell have IronClaw's rate limits", async () => {
    const byPath = new Map((await allTools()).map(({ group, tool }) => [`${group}.${tool.name}`, tool]));
    assert.deepEqual(byPath.get("shell.run")?.approval, { kind: "unless_auto_approved", reason: "Runs a command in the workspace" });
    assert.equal(byPath.get("shell.run")?.risk, "high");
    assert.deepEqual(byPath.get("shell.run")?.rateLimit, { perMinute: 30, perHour: 300 });
    assert.deepEqual(byPath.get("files.write")?.rateLimit, { perMinute: 20, perHour: 200 });
    assert.deepEqual(byPath.get("memory.write")?.rateLimit, { perMinute: 20, perHour: 200 });
    assert.deepEqual(byPath.get("web.fetch")?.rateLimit, { perMinute: 30, perHour: 500 });
    for (const path of ["echo.echo", "time.now", "json.query", "files.read", "files.list", "memory.search", "web.fetch"]) {
      assert.equal(byPath.get(path)?.risk, "low", path);
      assert.deepEqual(byPath.get(path)?.approval, { kind: "never" }, path);
    }
  });

  it("files in ro mode offers only reading tools; a shell that cannot run is not offered, with the reason", async () => {
    const h = await host();
    const ro = libraryGroupTools("files", { mode: "ro" }, h);
    assert.deepEqual(ro.ok && ro.tools.map((t) => t.name), ["read", "list"]);
    const noShell = libraryGroupTools("shell", {}, { ...h, shell: { ok: false, reason: "no bubblewrap here" } });
    assert.deepEqual(noShell, { ok: false, reason: "no bubblewrap here" });
  });

  it("memory search says what it can find, with and without embeddings", async () => {
    const h = await host();
    const search = (embeddings: boolean) => {
      const group = libraryGroupTools("memory", {}, { ...h, embeddings });
      return group.ok ? group.tools.find((t) => t.name === "search")!.description : "";
    };
    assert.match(search(false), /Full-text search only/);
    assert.match(search(true), /Hybrid search/);
  });

  it("exports its group names, which the registry protects as the library's", () => {
    assert.deepEqual(LIBRARY_PROTECTED_NAMES.names, ["echo", "time", "json", "web", "files", "shell", "memory"]);
    for (const name of LIBRARY_PROTECTED_NAMES.names) assert.match(protectedName(name) ?? "", /^it is a group of the built-in tool library/, name);
  });

  it("callLibraryTool never rejects: a thrown ToolError is its failure, any other throw a tool_error, an abort a timeout", async () => {
    const throwing = (error: Error): LibraryTool<never> => defineTool<object>({ ...BASE, needs: [], execute: () => Promise.reject(error) });
    assert.deepEqual(await callLibraryTool(throwing(new ToolError("quota", "no more", { retryable: true })), {}, baseContext()), {
      kind: "failure",
      failure: { code: "quota", message: "no more", retryable: true },
    });
    const bug = await callLibraryTool(throwing(new TypeError("x is undefined")), {}, baseContext());
    assert.equal(bug.kind === "failure" && bug.failure.code, "tool_error");
    assert.match(bug.kind === "failure" ? bug.failure.message : "", /The built-in tool t failed unexpectedly: x is undefined/);
    const controller = new AbortController();
    controller.abort(new Error("attempt timed out"));
    const aborted = await callLibraryTool(throwing(new Error("aborted")), {}, { now: () => 0, signal: controller.signal });
    assert.deepEqual(aborted, { kind: "failure", failure: { code: "timeout", message: "t was stopped before it finished (attempt timed out)." } });
  });

  it("definitionProblems names what is wrong with a definition", () => {
    const problems = definitionProblems({
      ...BASE,
      name: "bad name",
      description: " ",
      inputSchema: { type: "string" },
      risk: "extreme" as never,
      rateLimit: { perMinute: 0, onLimit: "queue" as never },
      timeoutMs: -1,
      sensitiveParams: ["token"],
      approval: { kind: "always", reason: "" },
    });
    assert.deepEqual(problems, [
      'name: "bad name" is not an identifier of at most 64 characters (letters, digits, _)',
      "description: say what the tool does, for the model that will call it",
      'inputSchema: the arguments are an object; give a schema with "type": "object"',
      'risk: "extreme" is not one of low, medium, high',
      "approval.reason: say why approval is needed (the approver reads it)",
      "rateLimit.perMinute: 0 is not a whole number from 1 to 100000",
      'rateLimit.onLimit: "queue" is not fail or wait',
      "timeoutMs: -1 is not a positive whole number of milliseconds",
      'sensitiveParams[0]: the JSON pointer "token" must start with "/" (or be "" for the whole value)',
    ]);
  });
});

const BASE: ToolDefinition = { name: "t", description: "d", inputSchema: { type: "object" }, risk: "low", approval: { kind: "never" } };
