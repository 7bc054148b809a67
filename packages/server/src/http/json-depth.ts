/**
 * The nesting depth a request body may reach. V8 parses JSON of any depth, but serialising it
 * again (the store writes inputs and payloads with `JSON.stringify`) and handing it to the
 * sandbox recurse, so a deep enough body would exhaust a stack: a fault of the server on bad
 * input. 256 levels is far deeper than any real document.
 */
export const MAX_JSON_DEPTH = 256;

/** Whether `value` nests arrays and objects deeper than `max`. Iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== "object" || item.value === null) continue;
    const depth = item.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(item.value)) stack.push({ value: child, depth });
  }
  return false;
}
