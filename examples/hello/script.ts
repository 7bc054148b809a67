// The total price of every book, fetched in parallel. Run it with the command in the README.
import { shop } from "tapedeck:tools";

export default async function (input: { category?: "books" | "games" | "music" } | null) {
  const category = input?.category ?? "books";
  const items = await shop.list_items({ category });
  console.log(`${items.length} items in ${category}`);
  const prices = await Promise.all(items.map((item) => shop.get_price({ sku: item.sku })));
  const total = prices.reduce((sum, price) => sum + price.cents, 0);
  return { category, items: items.map((item) => item.title), totalCents: total };
}
