import type { Store } from "../store/store.js";

/**
 * A toolset and the toolsets it derives from (`base`), nearest first: `[id, base, base's base,
 * …]`. A credential set on a toolset applies to the toolsets derived from it (a workflow saved
 * by an agent derives one), so resolution walks this chain. Toolsets are immutable and
 * content-addressed, so a chain is computed once per id.
 */

/** A chain longer than this is cut: derivations are a handful deep, and a lookup stays bounded. */
const MAX_CHAIN = 16;

const chains = new Map<string, Promise<readonly string[]>>();

export function toolsetChain(store: Store, toolsetId: string): Promise<readonly string[]> {
  let chain = chains.get(toolsetId);
  if (!chain) {
    chain = walk(store, toolsetId);
    chains.set(toolsetId, chain);
    // A failed read is not kept: the next call reads again.
    chain.catch(() => chains.delete(toolsetId));
  }
  return chain;
}

async function walk(store: Store, toolsetId: string): Promise<readonly string[]> {
  const chain = [toolsetId];
  for (
    let base = (await store.getToolset(toolsetId))?.base;
    base !== undefined && chain.length < MAX_CHAIN && !chain.includes(base);
    base = (await store.getToolset(base))?.base
  )
    chain.push(base);
  return chain;
}
