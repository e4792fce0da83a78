/**
 * The value kept in `kept` for `key`, or `make()`'s, kept from now on: for what the same few
 * inputs (queries, patterns, texts, function bodies) ask again and again. At `max` values the
 * first one kept is dropped.
 */
export function keptOrMade<K, V>(kept: Map<K, V>, max: number, key: K, make: () => V): V {
  if (kept.has(key)) return kept.get(key)!;
  const value = make();
  if (kept.size >= max) kept.delete(kept.keys().next().value as K);
  kept.set(key, value);
  return value;
}
