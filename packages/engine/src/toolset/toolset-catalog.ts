import type { JsonSchema, JsonValue, PinnedTool, PinnedToolset } from "@tapedeck/protocol";
import { EngineError } from "../errors.js";
import { CheckerPool, CheckTimeoutError, type ScriptCheck } from "../script/checker-pool.js";
import type { CheckOptions, ScriptDeclarations } from "../script/checker.js";
import type { CompiledScript } from "../script/compile.js";
import type { CheckResult } from "../script/diagnostic.js";
import { featureGlobals } from "../script/feature-globals.js";
import { scriptSizeDiagnostic } from "../script/script-size.js";
import type { McpToolSource } from "../sources/mcp/mcp-tool-source.js";
import type { SourceRouter } from "../sources/source-router.js";
import type { Store } from "../store/store.js";
import type { ToolsetOwner } from "../store/toolset-store.js";
import { canonicalJson } from "../util/canonical-json.js";
import { nullObject } from "../util/null-object.js";
import { SchemaValidator } from "../util/schema-validator.js";
import { renderDeclarations, type Declarations } from "./declarations.js";
import type { LoadedToolset } from "./loaded-toolset.js";
import { ArgsRedaction } from "./redacted-args.js";
import { mergeShapes, shapeOf } from "./observed-shape.js";
import type { LibraryPlace } from "./library-spec-file.js";
import { pinToolset } from "./pin.js";
import type { McpAddresses, McpOverride } from "./pin-mcp.js";
import { importableTools, scriptFeatures } from "./script-features.js";
import { parseToolsetSpec, ToolsetSpecError } from "./toolset-file.js";
import { unknownToolset } from "./unknown-toolset.js";

/**
 * The toolsets an engine has loaded: pinned toolsets read from the store once and kept ready to
 * execute (tools by path, the sandbox's groups and features, a schema validator), with the result
 * shapes observed of their tools and the declarations scripts are checked against; and the
 * checker that checks and transpiles scripts.
 *
 * Invariants:
 * - One entry per toolset id, for the engine's life: a pinned toolset never changes, so an entry
 *   is never reloaded; only its observed shapes (and so its declarations and `version`) grow.
 * - A toolset is cached before it is stored and forgotten if the store refuses it: a toolset
 *   that cannot be loaded leaves nothing behind.
 * - Observed shapes hold keys and types only, never values; each result costs one canonical
 *   serialisation to compare, and a changed shape bumps `version` (part of the checker's cache key).
 * - A toolset's runs start only when every source its tools need is there (`checkSources`).
 */

/** A toolset as the catalogue keeps it: pinned, ready to execute, with its observed result shapes. */
export interface CatalogedToolset extends LoadedToolset {
  readonly pinned: PinnedToolset;
  declarations: Declarations;
  /** Bumped when an observed shape changes: part of the checker's cache key. */
  version: number;
  readonly observed: Record<string, JsonSchema>;
  readonly observedText: Map<string, string>;
}

export interface RegisterToolsetOptions {
  /** Changes how MCP tools are pinned, by group (seed 002's `override`). Default: none. */
  readonly override?: Readonly<Record<string, McpOverride>>;
  /**
   * Where the toolset's Streamable HTTP MCP servers may be reached: `"public"` for a toolset
   * registered on a tenant's behalf (the server passes it for keys limited to a namespace or
   * labels): each connection, registration's included, resolves the host once, checks every
   * answer and connects to the checked address, so loopback, private and metadata addresses are
   * refused (`refused`). Default `"any"` (the operator's toolsets).
   */
  readonly mcpAddresses?: McpAddresses;
  /** The scope it is registered for, kept among its owners (`ToolsetStore.putToolset`). Default: none (a toolset without owners is everyone's). */
  readonly owner?: ToolsetOwner;
}

export interface ToolsetCatalogOptions {
  readonly store: Store;
  /** Lists MCP servers' tools when a toolset is registered, and learns the servers of every toolset loaded. */
  readonly mcp: McpToolSource;
  /** Where calls go: asked whether it can serve a toolset's tools before a run of it starts. */
  readonly sources: SourceRouter;
  /** Default: a `CheckerPool` of the catalogue's own, started at the first check and closed with it. */
  readonly checker?: ScriptCheck;
  /** The built-in tool library, whose groups a toolset's `library` enables. Default: none (such a toolset is refused). */
  readonly library?: LibraryPlace;
  /** What is wrong with a toolset's user tools (their code type-checked with `checker`), asked at registration. Default: nothing is checked. */
  readonly userToolProblems?: (toolset: PinnedToolset, checker: ScriptCheck) => Promise<readonly string[]>;
  /** The key `sensitiveParams` values are hashed with (`purposeKey`). Default: a key of the catalogue's own (hashes comparable in this process only). */
  readonly sensitiveKey?: () => Uint8Array;
}

export class ToolsetCatalog {
  readonly #store: Store;
  readonly #mcp: McpToolSource;
  readonly #sources: SourceRouter;
  readonly #library: LibraryPlace | undefined;
  readonly #toolsets = new Map<string, CatalogedToolset>();
  #checker: ScriptCheck | undefined;
  readonly #userToolProblems: ToolsetCatalogOptions["userToolProblems"];
  /** The checker this catalogue made (and closes). */
  #ownChecker: CheckerPool | undefined;
  /** Redacts the `sensitiveParams` of every toolset's calls (one key for all). */
  readonly #sensitive: ArgsRedaction;

  constructor(options: ToolsetCatalogOptions) {
    this.#store = options.store;
    this.#mcp = options.mcp;
    this.#sources = options.sources;
    this.#library = options.library;
    this.#checker = options.checker;
    this.#userToolProblems = options.userToolProblems;
    this.#sensitive = options.sensitiveKey === undefined ? ArgsRedaction.ephemeral() : new ArgsRedaction(options.sensitiveKey);
  }

  /** A registered toolset, loaded. Throws `not_found`. */
  async get(id: string): Promise<CatalogedToolset> {
    const cached = this.#toolsets.get(id);
    if (cached) return cached;
    const pinned = await this.#store.getToolset(id);
    if (!pinned) throw unknownToolset(id);
    return this.load(pinned, await this.#store.getObservedShapes(id));
  }

  /**
   * Checks and pins a toolset file's content, loads it and saves it. Throws `invalid_toolset` for
   * a spec that is invalid or a tool whose input schema cannot be compiled.
   */
  async register(spec: unknown, options: RegisterToolsetOptions = {}): Promise<{ readonly toolset: CatalogedToolset; readonly warnings: string[] }> {
    let pinned: PinnedToolset;
    let warnings: string[];
    try {
      ({ toolset: pinned, warnings } = await pinToolset(
        parseToolsetSpec(spec),
        this.#mcp,
        options.override,
        (id) => this.#store.getToolset(id),
        options.mcpAddresses,
        this.#library,
      ));
    } catch (error) {
      if (error instanceof ToolsetSpecError) throw new EngineError("invalid_toolset", error.message);
      throw error;
    }
    const validator = new SchemaValidator();
    for (const tool of pinned.tools) {
      const problem = validator.schemaProblem(tool.inputSchema);
      if (problem) throw new EngineError("invalid_toolset", `The input schema of ${tool.group}.${tool.name} cannot be compiled: ${problem}`);
    }
    // User tools' code is type-checked against exactly what each is granted.
    const userTools = (await this.#userToolProblems?.(pinned, this.checker)) ?? [];
    if (userTools.length > 0) throw new EngineError("invalid_toolset", `The toolset's user tools cannot be registered:\n- ${userTools.join("\n- ")}`);
    // The validator that just compiled every schema serves the toolset's runs. Loaded before it
    // is stored: a toolset that cannot be loaded is refused, and leaves nothing behind.
    const toolset = this.load(pinned, await this.#store.getObservedShapes(pinned.id), validator);
    await this.put(pinned, options.owner);
    return { toolset, warnings };
  }

  /** Loads a pinned toolset (once: a toolset loaded before is returned as it is). */
  load(pinned: PinnedToolset, observed: Record<string, JsonSchema>, validator = new SchemaValidator()): CatalogedToolset {
    const cached = this.#toolsets.get(pinned.id);
    if (cached) return cached;
    if (pinned.servers) this.#mcp.addServers(pinned.servers);
    // Keyed by group names: `constructor` or `toString` is a group like any other.
    const groups: Record<string, string[]> = nullObject();
    for (const tool of importableTools(pinned.tools)) (groups[tool.group] ??= []).push(tool.name);
    const loaded: CatalogedToolset = {
      id: pinned.id,
      pinned,
      byPath: new Map(pinned.tools.map((t) => [`${t.group}.${t.name}`, t])),
      groups,
      features: scriptFeatures(pinned.tools),
      validator,
      workflows: pinned.workflows ?? {},
      sensitive: this.#sensitive,
      ...(pinned.budget === undefined ? {} : { budget: pinned.budget }),
      declarations: renderDeclarations(pinned.tools, observed, pinned.workflows),
      version: 0,
      observed,
      observedText: new Map(Object.entries(observed).map(([path, shape]) => [path, canonicalJson(shape)])),
    };
    this.#toolsets.set(pinned.id, loaded);
    return loaded;
  }

  /** Stores a toolset `load` just cached, for `owner` when given; if the store refuses it, it is not kept in the cache either. */
  async put(pinned: PinnedToolset, owner?: ToolsetOwner): Promise<void> {
    try {
      await this.#store.putToolset(pinned, owner);
    } catch (error) {
      this.#toolsets.delete(pinned.id);
      throw error;
    }
  }

  /**
   * Records the shape of a result of a tool that declares no output schema, so later scripts
   * are checked against it (`@observed`). Keys and types only, never values.
   */
  observe(toolsetId: string, tool: PinnedTool, value: JsonValue): void {
    const entry = this.#toolsets.get(toolsetId);
    if (!entry || tool.outputSchema !== undefined) return;
    const path = `${tool.group}.${tool.name}`;
    const before = entry.observed[path];
    const shape = before === undefined ? shapeOf(value) : mergeShapes(before, shapeOf(value));
    const text = canonicalJson(shape);
    // Compared by canonical text, kept per tool, so each result costs one serialisation.
    if (entry.observedText.get(path) === text) return;
    entry.observedText.set(path, text);
    entry.observed[path] = shape;
    entry.version++;
    entry.declarations = renderDeclarations(entry.pinned.tools, entry.observed, entry.pinned.workflows);
    // Not part of any run's journal: losing it in a crash only delays a better declaration.
    this.#store.putObservedShape(toolsetId, path, shape).catch(() => {});
  }

  /** Throws `misconfigured` when this engine cannot serve every tool of the toolset (no host tools, a host module that lacks some). */
  checkSources(toolset: PinnedToolset): void {
    const problem = this.sourcesProblem(toolset);
    if (problem !== undefined) throw new EngineError("misconfigured", problem);
  }

  /** What `checkSources` would throw, as text; undefined when this engine can serve every tool of the toolset. */
  sourcesProblem(toolset: PinnedToolset): string | undefined {
    return this.#sources.check(toolset.tools);
  }

  /** Type-checks a script against a toolset's declarations (off the event loop); a script past `MAX_SCRIPT_BYTES` is refused unchecked. */
  check(source: string, toolset: CatalogedToolset, workflow?: CheckOptions["workflow"]): Promise<CheckResult> {
    const declarations: ScriptDeclarations = { id: `${toolset.id}#${toolset.version}`, text: toolset.declarations.typescript };
    return this.#checkScript(source, declarations, { extraGlobals: featureGlobals(toolset.features), ...(workflow ? { workflow } : {}) });
  }

  /** Transpiles a script that type-checked (loads TypeScript the first time). */
  compile(source: string): Promise<CompiledScript> {
    return this.checker.compile(source);
  }

  /** Checks and transpiles scripts; the engine's own pool unless one was given (its threads load TypeScript, a second, at the first check). */
  get checker(): ScriptCheck {
    if (this.#checker === undefined) this.#checker = this.#ownChecker = new CheckerPool();
    return this.#checker;
  }

  /** Closes the checker the catalogue made (one given to it is its owner's). */
  async close(): Promise<void> {
    await this.#ownChecker?.close();
  }

  async #checkScript(source: string, declarations: ScriptDeclarations, options: CheckOptions): Promise<CheckResult> {
    const tooLarge = scriptSizeDiagnostic(source);
    if (tooLarge !== undefined) return { ok: false, diagnostics: [tooLarge] };
    try {
      return await this.checker.check(source, declarations, options);
    } catch (error) {
      if (!(error instanceof CheckTimeoutError)) throw error;
      return { ok: false, diagnostics: [{ line: 1, column: 1, code: "check-timeout", category: "error", message: error.message, frame: "" }] };
    }
  }
}
