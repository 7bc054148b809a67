import { userToolSpecOf } from "./user-tool-spec.js";
import { ceilingProblems, DEFAULT_USER_TOOL_CEILINGS, type UserToolLimits } from "../toolset/user-tool-limits.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SaveToolRequest, ToolTestCase } from "@tapedeck/protocol/api";
import type { Diagnostic, JsonValue, PinnedTool, PinnedToolset, UserToolFileSpec } from "@tapedeck/protocol";
import { Workspace } from "../library/files/workspace.js";
import type { SandboxFactory } from "../sandbox/sandbox.js";
import type { ScriptCheck } from "../script/checker-pool.js";
import type { ToolOutcome } from "../sources/tool-source.js";
import { pinUserTools } from "../toolset/pin-user-tools.js";
import { toolsetOf } from "../toolset/pin.js";
import { ToolsetSpecError } from "../toolset/spec-error.js";
import { parseUserToolsSpec } from "../toolset/user-tools-spec-file.js";
import { canonicalJson } from "../util/canonical-json.js";
import { SchemaValidator } from "../util/schema-validator.js";
import { checkUserTool } from "./check-user-tools.js";
import { MemorySubCallJournal, type UserToolHost } from "./user-tool-host.js";
import type { UserTool } from "./user-tool-registration.js";
import { thrownCode, UserToolRunner } from "./user-tool-runner.js";
import type { ToolsetOwner } from "../store/toolset-store.js";

/**
 * `save_tool`: a tool the model writes, checked and tested before it is registered. Its fields
 * are checked as a toolset file's `userTools` entry, its code type-checked against exactly what
 * it is granted, and each of its test cases run in the sandbox in virtual time — `fetch`
 * answered from the case's mocks (after the grant's checks, so a case also proves the grant
 * fits), granted tools from its mocks, the workspace a fresh temporary folder — with the output
 * checked against the output schema and the case's expectation. Only then is the toolset derived
 * that pins it: new runs on the derived id see it, running runs keep their toolset.
 *
 * Invariants:
 * - Nothing is sent anywhere while testing: a request without a mock fails, it is never made.
 * - A refusal says everything the model needs to fix it at once: each problem by field, each
 *   code diagnostic with its line and frame, each failing case with what differed.
 * - Saving never changes a toolset: it derives one (`base` = the toolset saved on).
 * - Saving only adds: the base's tools are kept as pinned (their policies with them), and a saved
 *   tool never takes the name or the group of one of them (`nameTaken`); it may replace a tool
 *   saved before (`user.saved`).
 */

/** `Engine.saveTool`'s options: the wire request of `save_tool` (`@tapedeck/protocol/api`), and the toolset it derives from. */
export interface SaveToolOptions extends SaveToolRequest {
  /** The toolset to derive from: the tool is checked against its tools, and the derived toolset keeps them. */
  readonly toolset: string;
  /** The scope the derived toolset is saved for, kept among its owners (`ToolsetStore.putToolset`). Default: none. */
  readonly owner?: ToolsetOwner;
}

/** How one test case went. */
export interface ToolTestResult {
  readonly name: string;
  readonly ok: boolean;
  /** What it returned (or its error's code and message). */
  readonly got: JsonValue;
  /** What differed, for a failing case. */
  readonly problem?: string;
}

export type SaveToolOutcome =
  /** Nothing was saved: fix what is named and save again. */
  | { readonly kind: "refused"; readonly problems: readonly string[]; readonly diagnostics: readonly Diagnostic[]; readonly tests: readonly ToolTestResult[] }
  /** The derived toolset that pins the tool (not stored yet: the engine stores it). */
  | { readonly kind: "saved"; readonly toolset: PinnedToolset; readonly tests: readonly ToolTestResult[]; readonly warnings: readonly Diagnostic[] };

export interface SaveToolDeps {
  readonly checker: ScriptCheck;
  readonly sandboxes: SandboxFactory;
  /** The virtual time the tests run at. */
  readonly now: number;
  /** The server's ceilings on the tool's limits. Default `DEFAULT_USER_TOOL_CEILINGS`. */
  readonly ceilings?: UserToolLimits;
}

/** Most test cases one save runs: each is a sandbox. */
export const MAX_TOOL_TESTS = 50;

export async function saveUserTool(options: SaveToolOptions, base: PinnedToolset, deps: SaveToolDeps): Promise<SaveToolOutcome> {
  const refused = (problems: readonly string[], diagnostics: readonly Diagnostic[] = [], tests: readonly ToolTestResult[] = []): SaveToolOutcome => ({
    kind: "refused",
    problems,
    diagnostics,
    tests,
  });
  const { group, name } = options;
  const file: UserToolFileSpec = {
    description: options.description,
    code: options.code,
    inputSchema: options.inputSchema,
    ...(options.outputSchema === undefined ? {} : { outputSchema: options.outputSchema }),
    ...(options.capabilities === undefined ? {} : { grants: options.capabilities }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  };
  let parsed;
  try {
    parsed = parseUserToolsSpec({ [group]: { [name]: file } });
  } catch (error) {
    if (error instanceof ToolsetSpecError) return refused([error.message.replace(`userTools.${group}["${name}"]`, "the tool")]);
    throw error;
  }
  const taken = nameTaken(base, group, name);
  if (taken !== undefined) return refused([taken]);
  const [unsaved] = pinUserTools(parsed, {}) as [PinnedTool];
  const pinned: PinnedTool = { ...unsaved, user: { ...unsaved.user!, saved: true } };
  const over = ceilingProblems(userToolSpecOf(pinned).limits, deps.ceilings ?? DEFAULT_USER_TOOL_CEILINGS);
  if (over.length > 0) return refused(over);
  const schemas = new SchemaValidator();
  const schemaProblems = [pinned.inputSchema, ...(pinned.outputSchema === undefined ? [] : [pinned.outputSchema])]
    .map((schema) => schemas.schemaProblem(schema))
    .filter((problem): problem is string => problem !== undefined);
  if (schemaProblems.length > 0) return refused(schemaProblems.map((problem) => `a schema cannot be compiled: ${problem}`));
  const tests = options.tests ?? [];
  if (tests.length > MAX_TOOL_TESTS) return refused([`tests: at most ${MAX_TOOL_TESTS} cases; keep the ones that show what the tool must do`]);

  const tools = [...base.tools.filter((tool) => !(tool.group === group && tool.name === name)), pinned];
  const checked = await checkUserTool(pinned, tools, deps.checker, "save_tool");
  if (!checked.ok) return refused(checked.problems, checked.diagnostics);
  const results = await runTests(checked.finish(await deps.checker.compile(options.code)), tests, deps);
  if (results.some((result) => !result.ok)) return refused([`${results.filter((r) => !r.ok).length} of ${results.length} test cases failed`], [], results);
  return {
    kind: "saved",
    toolset: toolsetOf(tools, base.servers ?? {}, base.id, base.workflows ?? {}, base.budget),
    tests: results,
    warnings: checked.warnings,
  };
}

/**
 * Why `group.name` cannot be saved on `base`, or `undefined`. A saved tool only adds: it never
 * takes the name of one of the toolset's own tools nor joins their group, since the policies the
 * toolset's author wrote for them (`group.name`, `group.*`: approval, `sensitiveParams`, rate
 * limits) were pinned on those tools and would not cover it — replacing `u.transfer` would run
 * it at once, its secrets in clear. It may replace a tool saved before (`user.saved`), which no
 * policy of the author's covers. Protected group names are refused by `parseUserToolsSpec`.
 */
function nameTaken(base: PinnedToolset, group: string, name: string): string | undefined {
  const own = base.tools.filter((tool) => tool.group === group && tool.user?.saved !== true);
  const same = own.find((tool) => tool.name === name);
  if (same !== undefined) {
    return `name: ${group}.${name} is already a ${same.source} tool of this toolset; a saved tool cannot replace it (its approval and other policies would not carry over): save the tool under a name and group of its own`;
  }
  if (own.length > 0) {
    return `group: "${group}" is a group of this toolset's own ${own[0]!.source} tools (its policies cover them, not a saved tool); save the tool in a group of its own`;
  }
  return undefined;
}

async function runTests(tool: UserTool, tests: readonly ToolTestCase[], deps: SaveToolDeps): Promise<ToolTestResult[]> {
  const runner = new UserToolRunner(deps.sandboxes);
  const results: ToolTestResult[] = [];
  for (const [index, test] of tests.entries()) {
    const name = test.name ?? `case ${index + 1}`;
    const folder = tool.grants.workspace === undefined ? undefined : await mkdtemp(join(tmpdir(), "tapedeck-save-tool-"));
    try {
      const workspace = folder === undefined ? undefined : await Workspace.open(folder, tool.grants.workspace!);
      const outcome = await runner.call(tool, test.input, {
        key: `save_tool/${index + 1}`,
        signal: new AbortController().signal,
        now: () => deps.now,
        host: mockHost(test, workspace),
        journal: new MemorySubCallJournal(),
      });
      results.push(judge(name, test, outcome.result));
    } finally {
      if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    }
  }
  return results;
}

function judge(name: string, test: ToolTestCase, result: UserToolOutcomeResult): ToolTestResult {
  if (result.kind === "failure") {
    const got = { error: result.failure.code, message: result.failure.message };
    // A case may name the code the tool throws of its own: its failure is tool_error, that code kept as data.
    if (test.error === result.failure.code || (test.error !== undefined && test.error === thrownCode(result.failure))) return { name, ok: true, got };
    const wanted = test.error === undefined ? `an output${test.output === undefined ? "" : ` ${canonicalJson(test.output)}`}` : `the error ${test.error}`;
    return { name, ok: false, got, problem: `expected ${wanted}, got the error ${result.failure.code}: ${result.failure.message}` };
  }
  if (test.error !== undefined)
    return { name, ok: false, got: result.value, problem: `expected the error ${test.error}, got the output ${canonicalJson(result.value)}` };
  if (test.output !== undefined && canonicalJson(test.output) !== canonicalJson(result.value))
    return { name, ok: false, got: result.value, problem: `expected ${canonicalJson(test.output)}, got ${canonicalJson(result.value)}` };
  return { name, ok: true, got: result.value };
}

type UserToolOutcomeResult = Awaited<ReturnType<UserToolRunner["call"]>>["result"];

/** A host that answers from the case's mocks and sends nothing. */
function mockHost(test: ToolTestCase, workspace: Workspace | undefined): UserToolHost {
  return {
    fetch: (args) => {
      const request = args as { url?: string; method?: string };
      const method = (request.method ?? "GET").toUpperCase();
      const mock = (test.http ?? []).find((m) => m.url === request.url && (m.method ?? "GET").toUpperCase() === method);
      if (mock === undefined)
        return answer({
          kind: "failure",
          failure: {
            code: "no_mock",
            message: `The test has no answer for ${method} ${request.url ?? ""}; add one to its "http" (nothing is sent while testing).`,
          },
        });
      const status = mock.status ?? 200;
      return answer({
        kind: "result",
        value: { status, statusText: "", url: mock.url, redirected: false, ...mockedBody(mock) },
      });
    },
    invoke: (name) => {
      const mocked = test.tools?.[name];
      if (mocked === undefined)
        return answer({ kind: "failure", failure: { code: "no_mock", message: `The test has no answer for ${name}; add one to its "tools".` } });
      return answer({ kind: "result", value: mocked });
    },
    ...(workspace === undefined ? {} : { workspace }),
  };
}

function answer(outcome: ToolOutcome): Promise<ToolOutcome> {
  return Promise.resolve(outcome);
}

/**
 * A mock's headers and body text: a string body as it is, any other JSON as its JSON text. A
 * model writing a test naturally gives a JSON API's answer as an object; it used to be refused
 * for not being a string, and nothing said so.
 */
function mockedBody(mock: NonNullable<ToolTestCase["http"]>[number]): { headers: Record<string, string>; body: string } {
  const headers = { ...mock.headers };
  if (mock.body === undefined || typeof mock.body === "string") return { headers, body: mock.body ?? "" };
  if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  return { headers, body: JSON.stringify(mock.body) };
}
