import { toolPath, type PinnedTool } from "@tapedeck/protocol";
import type { ToolCallRequest, ToolOutcome, ToolSource } from "../sources/tool-source.js";
import type { ScenarioSource } from "./scenario-source.js";

/**
 * The built-in library in `test_script`: a library tool the scenario mocks (or has recorded
 * calls of) is answered by the scenario; otherwise the groups that compute without touching
 * anything (echo, time on the test's virtual clock, json) and `web.fetch` (whose request is an
 * `http.fetch` the scenario answers) run for real, and the rest (files, shell, memory: they
 * would change a workspace or the memory index) need a mock like any tool.
 */

/** Groups run for real in a test: their answers depend on the arguments and the virtual clock only. */
const COMPUTED: ReadonlySet<string> = new Set(["echo", "time", "json", "web"]);

export class ScenarioLibrarySource implements ToolSource {
  constructor(
    private readonly scenario: ScenarioSource,
    /** The library running on the test's clock, its requests sent to the scenario. */
    private readonly library: ToolSource,
  ) {}

  /** A test serves every library tool: through the scenario or by computing it. */
  check(_tools: readonly PinnedTool[]): string | undefined {
    return undefined;
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    if (!COMPUTED.has(request.tool.group) || this.scenario.names(toolPath(request.tool))) return this.scenario.call(request);
    this.scenario.answeredByLibrary(request.idempotencyKey);
    return this.library.call(request);
  }
}
