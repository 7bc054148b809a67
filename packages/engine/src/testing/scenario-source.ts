import { toolFailure, type JsonValue } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "../sources/tool-source.js";
import { canonicalJson } from "../util/canonical-json.js";
import type { MockResult, RecordedOutcome, Scenario } from "./scenario.js";

/** Where a test call's answer came from, for the trace. */
export type AnswerSource = "recorded" | "mock" | "none" | "library";

/**
 * The only tool source of a `test_script` run: answers every call from the scenario, never
 * from a server. Recorded calls (a cassette, `from_run`) are taken first, each once, by tool
 * and canonical arguments; then the tool's mocks. A delay becomes `notBefore` on the virtual
 * clock, so it costs no real time.
 */
export class ScenarioSource implements ToolSource {
  readonly #recorded: { readonly call: RecordedOutcome; readonly key: string; used: boolean }[];
  readonly #mocks = new Map<string, { readonly mock: MockResult; used: boolean }[]>();
  readonly #answeredBy = new Map<string, AnswerSource>();

  constructor(
    private readonly scenario: Scenario,
    private readonly clock: Clock,
  ) {
    this.#recorded = scenario.recorded.map((call) => ({ call, key: `${call.tool} ${canonicalJson(call.args)}`, used: false }));
    for (const [tool, mocks] of Object.entries(scenario.tools))
      this.#mocks.set(
        tool,
        mocks.map((mock) => ({ mock, used: false })),
      );
  }

  /** Where the call with this idempotency key was answered from. */
  answeredBy(key: string): AnswerSource | undefined {
    return this.#answeredBy.get(key);
  }

  /** Records that the call with this idempotency key was answered by the library itself (`ScenarioLibrarySource`). */
  answeredByLibrary(key: string): void {
    this.#answeredBy.set(key, "library");
  }

  /** Whether the scenario answers calls of `tool` (`group.name`) at all: it mocks it, or recorded calls of it. */
  names(tool: string): boolean {
    return this.#mocks.has(tool) || this.#recorded.some((r) => r.call.tool === tool);
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    const tool = `${request.tool.group}.${request.tool.name}`;
    const recorded = this.#recorded.find((r) => !r.used && r.key === `${tool} ${canonicalJson(request.args)}`);
    if (recorded) {
      recorded.used = true;
      this.#answeredBy.set(request.idempotencyKey, "recorded");
      return Promise.resolve(this.#outcome(recorded.call.outcome, recorded.call.ms));
    }
    const mocks = this.#mocks.get(tool);
    const repeat = this.scenario.repeat.has(tool);
    const mock = mocks?.find((m) => (repeat || !m.used) && (m.mock.args === undefined || contains(request.args, m.mock.args)));
    if (mock) {
      mock.used = true;
      this.#answeredBy.set(request.idempotencyKey, "mock");
      return Promise.resolve(this.#outcome(mock.mock.outcome, mock.mock.delayMs));
    }
    this.#answeredBy.set(request.idempotencyKey, "none");
    const args = canonicalJson(request.args);
    const why = mocks === undefined ? `has no mock for ${tool}` : `has no more results for ${tool} (it gives ${mocks.length}) matching these arguments`;
    return Promise.resolve({
      kind: "failure",
      failure: toolFailure(
        "no_mock",
        `The test scenario ${why}: ${tool}(${args.length > 200 ? `${args.slice(0, 200)}…` : args}). Add tools["${tool}"] to the scenario.`,
      ),
    });
  }

  #outcome(outcome: MockResult["outcome"], delayMs: number): ToolOutcome {
    const notBefore = this.clock.now() + delayMs;
    return outcome.ok ? { kind: "result", value: outcome.value, notBefore } : { kind: "failure", failure: outcome.error, notBefore };
  }
}

/** Whether `value` contains `pattern`: equal, or for objects every key of the pattern contained (deeply). */
function contains(value: JsonValue, pattern: JsonValue): boolean {
  if (typeof pattern !== "object" || pattern === null || Array.isArray(pattern)) return canonicalJson(value) === canonicalJson(pattern);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.entries(pattern).every(([key, sub]) => key in value && contains(value[key]!, sub));
}
