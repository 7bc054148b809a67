import type { CreateToolsetRequest, Declarations, RegisteredToolset, ToolSearchHit, ToolSearchResult, ToolsetInfo } from "../api.js";
import type { HttpClient } from "../http-client.js";

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
    const found = await this.#http.request<ToolSearchResult>("GET", `/v1/toolsets/${encodeURIComponent(id)}/search`, { query: { q: query, limit: options.limit } });
    return found.hits;
  }
}
