import type {
  CreateToolsetRequest,
  Declarations,
  Diagnostic,
  RegisteredToolset,
  SavedTool,
  SavedWorkflow,
  SaveToolRequest,
  SaveWorkflowRequest,
  ToolSearchHit,
  ToolSearchResult,
  ToolsetInfo,
} from "@tapedeck/protocol/api";
import { TapedeckError } from "../errors.js";
import type { HttpClient } from "../http-client.js";

/** What saving a workflow gives: the derived toolset that pins it, or the type-checker's refusal. */
export type SaveWorkflowResult =
  /** Saved: `id` is the derived toolset (start scripts on it to use `workflows.<name>`); the toolset it was saved on is unchanged. */
  | ({ readonly kind: "saved" } & SavedWorkflow)
  /** The code did not type-check, or its default export does not take `input` and return `output`: nothing was saved. */
  | { readonly kind: "refused"; readonly diagnostics: readonly Diagnostic[] };

/** Toolsets: registered once, content-addressed (the same spec always gets the same id). */
export class Toolsets {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Registers a toolset (connecting to its MCP servers to pin their tools); 422 `invalid_toolset` says what is wrong. */
  create(spec: CreateToolsetRequest): Promise<RegisteredToolset> {
    return this.#http.request("POST", "/v1/toolsets", { body: spec });
  }

  /**
   * Saves a workflow on the toolset `id`: derives a toolset that pins it (a new id; the toolset
   * `id` is unchanged, and its workflows carry over). A script that does not type-check is
   * `refused`, not thrown; a malformed name or schema is a 400 or 422 `TapedeckError`.
   */
  async saveWorkflow(id: string, request: SaveWorkflowRequest): Promise<SaveWorkflowResult> {
    try {
      const saved = await this.#http.request<SavedWorkflow>("POST", `/v1/toolsets/${encodeURIComponent(id)}/workflows`, { body: request });
      return { kind: "saved", id: saved.id, declarations: saved.declarations, warnings: saved.warnings };
    } catch (error) {
      if (TapedeckError.is(error) && error.code === "script_refused") return { kind: "refused", diagnostics: error.diagnostics ?? [] };
      throw error;
    }
  }

  /**
   * Saves a sandboxed user tool on the toolset `id` (`save_tool`): checked, its test cases run in
   * the sandbox in virtual time, then pinned by a derived toolset (a new id; `id` is unchanged).
   * `saved: false` says what to fix (problems, diagnostics, failing cases), and nothing was saved.
   */
  saveTool(id: string, request: SaveToolRequest): Promise<SavedTool> {
    return this.#http.request("POST", `/v1/toolsets/${encodeURIComponent(id)}/tools`, { body: request });
  }

  /** A toolset's pinned tools and declarations. */
  get(id: string): Promise<ToolsetInfo> {
    return this.#http.request("GET", `/v1/toolsets/${encodeURIComponent(id)}`);
  }

  /** A toolset's declarations: refreshed as observed result types improve. */
  declarations(id: string): Promise<Declarations> {
    return this.#http.request("GET", `/v1/toolsets/${encodeURIComponent(id)}/declarations`);
  }

  /**
   * The tools that best match `query` (words describing a need, or a tool's name), best first,
   * with their declarations: at most `limit` (default 5, at most 50). A query without words is
   * 400 `invalid_request`, its message written for the model.
   */
  async search(id: string, query: string, options: { readonly limit?: number } = {}): Promise<readonly ToolSearchHit[]> {
    const found = await this.#http.request<ToolSearchResult>("GET", `/v1/toolsets/${encodeURIComponent(id)}/search`, {
      query: { q: query, limit: options.limit },
    });
    return found.hits;
  }
}
