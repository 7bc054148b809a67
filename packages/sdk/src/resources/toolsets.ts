import type { CreateToolsetRequest, Declarations, RegisteredToolset, ToolsetInfo } from "../api.js";
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
}
