import type { PinnedToolset } from "@tapedeck/protocol";
import { anthropicTools } from "./anthropic-lowering.js";
import { bindDirectTools } from "./direct-binding.js";
import { checkDirectOptions, type Lowering } from "./direct-options.js";
import { responsesTools } from "./openai-lowering.js";
import { estimateTokens } from "./token-estimate.js";

/**
 * Input tokens of the tools block of a session's first request, eager against each lazy
 * lowering, on the two APIs that have a native one — what `npm run bench` reports for the
 * 325-tool corpus (`test-support/tool-search-corpus.ts`).
 *
 * What is counted: the JSON text of the tools the model is given, as the request carries them,
 * minus what the API keeps out of the prompt: under the `anthropic` lowering deferred tools are
 * not in the prompt until loaded (Anthropic's documentation), so only the eager tools count;
 * under the `openai` lowering the deferred functions are inside namespaces, and OpenAI's tool
 * search guide (developers.openai.com/api/docs/guides/tools-tool-search) says "At the start of a
 * request, the model still sees the name and description of whatever is searchable. For a
 * namespace or MCP server, that means the model sees only the namespace or server name and
 * description" — so each namespace counts as its name and description, the functions inside it
 * not at all; the eager functions and `tool_search` count whole. The system prompt and messages are
 * the harness's, the same in every case, and not counted. `count` is the tokenizer: the
 * benchmark passes a real one (o200k_base) and names it; the default is `estimateTokens`.
 */

export interface FirstRequestTokens {
  readonly tools: number;
  readonly anthropic: { readonly eager: number; readonly menu: number; readonly native: number };
  readonly openaiResponses: { readonly eager: number; readonly menu: number; readonly native: number };
}

export function firstRequestTokens(toolset: PinnedToolset, count: (text: string) => number = estimateTokens): FirstRequestTokens {
  const table = (lowering?: Lowering) => {
    const checked = checkDirectOptions(lowering === undefined ? {} : { lazy: { lowering } });
    if (!checked.ok) throw new Error(`firstRequestTokens: ${JSON.stringify(checked.errors)}`);
    return bindDirectTools(toolset, checked.options);
  };
  const eager = table();
  const menu = table("menu");
  const anthropicNative = anthropicTools(table("anthropic"), []).filter((t) => t.defer_loading !== true);
  const openaiNative = responsesTools(table("openai"), []).map((t) =>
    t.type === "namespace" ? { type: t.type, name: t.name, description: t.description } : t,
  );
  const tokens = (tools: unknown) => count(JSON.stringify(tools));
  return {
    tools: toolset.tools.length,
    anthropic: { eager: tokens(anthropicTools(eager, [])), menu: tokens(anthropicTools(menu, [])), native: tokens(anthropicNative) },
    openaiResponses: { eager: tokens(responsesTools(eager, [])), menu: tokens(responsesTools(menu, [])), native: tokens(openaiNative) },
  };
}
