/**
 * An empty object without a prototype, for collections keyed by names that users, servers or
 * scripts chose: `constructor`, `toString` or `__proto__` is then a key like any other, never an
 * inherited member of `Object.prototype` (prefer a `Map` where the collection does not have to
 * be a JSON object).
 */
export function nullObject<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
