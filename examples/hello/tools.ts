// Host tool implementations for examples/hello: `tapedeck run … --host examples/hello/tools.ts`.
// Each tool gets its arguments and a context whose `idempotencyKey` is the same on every attempt.

const catalogue: Record<string, { sku: string; title: string }[]> = {
  books: [
    { sku: "b-1", title: "The Pragmatic Programmer" },
    { sku: "b-2", title: "Designing Data-Intensive Applications" },
  ],
  games: [{ sku: "g-1", title: "Go board, 19x19" }],
  music: [{ sku: "m-1", title: "Kind of Blue" }],
};

const prices: Record<string, number> = { "b-1": 3999, "b-2": 4550, "g-1": 2500, "m-1": 1299 };

export const shop = {
  list_items: async ({ category }: { category: string }) => catalogue[category] ?? [],
  get_price: async ({ sku }: { sku: string }) => {
    const cents = prices[sku];
    if (cents === undefined) throw new Error(`no item ${sku}`);
    return { sku, cents };
  },
};
