import MiniSearch from "minisearch";
import { SEARCH_LIMIT, toolPath, type JsonSchema, type PinnedTool, type PinnedToolset } from "@tapedeck/protocol";
import { EngineError, EngineErrorCode } from "../errors.js";
import { renderToolDeclaration } from "./declarations.js";
import { importableTools } from "./script-features.js";

/**
 * Ranked search over a pinned toolset's tools, behind the agent tool `search_tools`: a model
 * given hundreds of tools asks for what it needs in words and reads the declarations of a few.
 *
 * Invariants:
 * - One index per toolset id, built on first use and kept in a small LRU. A toolset is immutable
 *   and its id is the hash of its content, so a cached index is never stale.
 * - Reads only the toolset: parameter text comes from the input schemas' own `properties`
 *   (nested ones too, to `PARAM_DEPTH`); `$ref`s are not followed, so nothing is fetched.
 * - Deterministic: the same toolset and query give the same hits in the same order.
 * - Built-ins (`http.fetch`) are not searched: scripts reach them through globals.
 *
 * Ranking is BM25 (MiniSearch) over five fields, words split out of identifiers
 * (`createDraftOrder`, `list_pull_requests`, `API-post-search`), with a light English stemmer,
 * prefix matching (`calend` finds `calendar`) and fuzzy matching (`calender`, `slak`).
 */

export interface ToolSearchOptions {
  /** How many hits to return, best first. Default 5; above 50 gives 50. Not a positive integer: throws. */
  readonly limit?: number;
}

export interface ToolSearchHit {
  /** The tool as the journal names it, `group.name`; a script calls it so, or `group["name"]` when the name is not an identifier. */
  readonly tool: string;
  /** The group the script imports from `tapedeck:tools`. */
  readonly group: string;
  /** Relevance, higher is better; comparable only between hits of one search. */
  readonly score: number;
  /** The tool's TypeScript declaration: `declare const group: { name(args: …): Promise<…>; };`. */
  readonly declaration: string;
}

/** Hits a search answers, by default and at most: the protocol's, since the API's requests are held to it too. */
export { SEARCH_LIMIT };
const DEFAULT_LIMIT = SEARCH_LIMIT.default;
const MAX_LIMIT = SEARCH_LIMIT.max;
/** Indexes kept: one for 300 tools holds about 200 KB and takes 5–20 ms to build, so a few MB at most. */
const CACHE_SIZE = 16;
/** Schema levels read for parameters: deeper ones are rarely what a need is phrased in, and this bounds work per schema. */
const PARAM_DEPTH = 3;

/** Words of a query searched (stop words aside); the rest are ignored. A need takes a few: a pasted paragraph costs no more. */
const MAX_QUERY_WORDS = 32;
/** A query that is a tool's exact name or path multiplies its score by this: it was asked for by name. */
const EXACT_BOOST = 10;
/** Field weights: what a tool is called and where it lives say most, its parameters least. */
const BOOST = { name: 3, group: 2.5, description: 1.5, parameters: 1, parameterText: 0.5 } as const;
const FIELDS = Object.keys(BOOST);

interface ToolDocument {
  readonly id: number;
  readonly group: string;
  readonly name: string;
  readonly description: string;
  readonly parameters: string;
  readonly parameterText: string;
}

export class ToolSearch {
  private static readonly cache = new Map<string, ToolSearch>();
  private readonly declarations = new Map<number, string>();
  /** Tool ids by lower-case name and by lower-case path. */
  private readonly byName = new Map<string, Set<number>>();

  private constructor(
    private readonly tools: readonly PinnedTool[],
    private readonly index: MiniSearch<ToolDocument>,
  ) {
    tools.forEach((tool, id) => {
      for (const key of [tool.name.toLowerCase(), toolPath(tool).toLowerCase()]) {
        this.byName.set(key, (this.byName.get(key) ?? new Set<number>()).add(id));
      }
    });
  }

  /** The search of `toolset`: built on first use, then the same instance for the same id. */
  static of(toolset: PinnedToolset): ToolSearch {
    const cached = ToolSearch.cache.get(toolset.id);
    // Re-inserting keeps the map in least-recently-used order: the first key is evicted first.
    if (cached) ToolSearch.cache.delete(toolset.id);
    const search = cached ?? ToolSearch.build(toolset);
    ToolSearch.cache.set(toolset.id, search);
    for (const id of ToolSearch.cache.keys()) {
      if (ToolSearch.cache.size <= CACHE_SIZE) break;
      ToolSearch.cache.delete(id);
    }
    return search;
  }

  private static build(toolset: PinnedToolset): ToolSearch {
    const tools = importableTools(toolset.tools);
    const index = new MiniSearch<ToolDocument>({ fields: FIELDS, tokenize, processTerm });
    index.addAll(tools.map(toolDocument));
    return new ToolSearch(tools, index);
  }

  /**
   * The tools that best match `query`, best first; none when nothing matches. Throws an
   * `EngineError` (`invalid_request`, its message written for the model) when the query has no
   * words to search for or `limit` is not a positive integer.
   */
  search(query: string, options: ToolSearchOptions = {}): readonly ToolSearchHit[] {
    const limit = checkLimit(options.limit ?? DEFAULT_LIMIT);
    const words = tokenize(query)
      .filter((word) => processTerm(word) !== null)
      .slice(0, MAX_QUERY_WORDS);
    if (words.length === 0) throw new EngineError(EngineErrorCode.invalid_request, BLANK_QUERY);
    const exact = this.byName.get(query.trim().toLowerCase());
    const boostDocument = (id: number): number => (exact?.has(id) ? EXACT_BOOST : 1);
    const results = this.index.search(words.join(" "), { boost: BOOST, prefix: usePrefix, fuzzy: fuzziness, combineWith: "OR", boostDocument });
    return results.slice(0, limit).map((result) => this.hit(result.id as number, result.score));
  }

  private hit(id: number, score: number): ToolSearchHit {
    const tool = this.tools[id]!;
    let declaration = this.declarations.get(id);
    if (declaration === undefined) this.declarations.set(id, (declaration = renderToolDeclaration(tool)));
    return { tool: toolPath(tool), group: tool.group, score, declaration };
  }
}

const BLANK_QUERY =
  'search_tools needs words to search for: describe the tool you need, e.g. "send a message to a slack channel", or give a tool\'s name, e.g. "github.create_issue".';

function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new EngineError(
      EngineErrorCode.invalid_request,
      `search_tools: limit must be a whole number from 1 to ${MAX_LIMIT}, not ${limit}; leave it out for ${DEFAULT_LIMIT}.`,
    );
  }
  return Math.min(limit, MAX_LIMIT);
}

function toolDocument(tool: PinnedTool, id: number): ToolDocument {
  const params = { names: [] as string[], texts: [] as string[] };
  collectParameters(tool.inputSchema, 1, params);
  return {
    id,
    group: tool.group,
    name: tool.name,
    description: tool.description,
    parameters: params.names.join(" "),
    parameterText: params.texts.join(" "),
  };
}

/** Names and descriptions of the properties of `schema`, and of theirs and their items', `PARAM_DEPTH` levels deep. */
function collectParameters(schema: JsonSchema | undefined, depth: number, out: { names: string[]; texts: string[] }): void {
  if (depth > PARAM_DEPTH || typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
  const properties = schema.properties;
  if (typeof properties === "object" && properties !== null && !Array.isArray(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      out.names.push(name);
      if (typeof property === "object" && property !== null && !Array.isArray(property)) {
        if (typeof property.description === "string") out.texts.push(property.description);
        collectParameters(property, depth + 1, out);
      }
    }
  }
  // An array parameter's items are described by their own properties (`files[].path`).
  const items = schema.items;
  if (typeof items === "object" && items !== null && !Array.isArray(items)) collectParameters(items, depth + 1, out);
}

/** Words of `text`, identifiers split: `createDraftOrder`, `list_pull_requests`, `API-post-search`. */
function tokenize(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");
  return spaced.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== "");
}

/**
 * Words so common in needs and descriptions that they only add noise. General English, not
 * chosen for any query.
 */
const STOP_WORDS = new Set(
  "a an and are as at be by can do does for from has have how i in into is it its me my of on or our please that the their them then there these this to was we what when which who will with you your".split(
    " ",
  ),
);

/** A term as indexed and searched: lower case, stemmed; stop words and single letters dropped. */
function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return lower.length < 2 || STOP_WORDS.has(lower) ? null : stem(lower);
}

/**
 * A light, general English stemmer (Harman's "S" stemmer): plural endings only, so that
 * `messages` meets `message` and `queries` meets `query`. Prefix search covers the rest.
 */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies") && !/[ae]ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("es") && !/[aeo]es$/.test(word)) return word.slice(0, -1);
  if (word.length > 3 && word.endsWith("s") && !/[us]s$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Prefixes shorter than 3 letters match too much to mean anything. */
function usePrefix(term: string): boolean {
  return term.length >= 3;
}

/** Edits allowed: none under 4 letters (too many near words), then about one per three letters. */
function fuzziness(term: string): number | boolean {
  return term.length >= 4 ? 0.3 : false;
}
