import { isObject, type Json, type JsonObject } from "../wire/json";
import { termsOf } from "./full-text-analysis";

/**
 * Range indexes of one container, as its indexing policy asks for them. Each path's index is
 * built the first time a query can use it and kept up to date by every write after that
 * (consistent indexing: a write is visible to the next query). An index maps each value found
 * at the path to the items holding it; values are kept sorted for range lookups. Array
 * elements are indexed under the path followed by `[]`.
 */
export interface Indexed {
  /** The item's document, parsed (only while indexing it). */
  doc(): JsonObject;
}

/** A value as index key: type-tagged so 1 and "1" differ, ordered as Cosmos DB orders types. */
export function indexKey(value: Json | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return "0";
  switch (typeof value) {
    case "boolean":
      return value ? "1t" : "1f";
    case "number":
      return `2${sortableNumber(value)}`;
    case "string":
      return `3${value}`;
    default:
      return Array.isArray(value) ? `4${JSON.stringify(value)}` : `5${JSON.stringify(value)}`;
  }
}

/** A number as text that sorts as the number does (sign-magnitude of the IEEE 754 bits). */
function sortableNumber(n: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n);
  const high = view.getUint32(0);
  const low = view.getUint32(4);
  const negative = high >>> 31 === 1;
  const h = negative ? ~high >>> 0 : (high | 0x80000000) >>> 0;
  const l = negative ? ~low >>> 0 : low;
  return h.toString(16).padStart(8, "0") + l.toString(16).padStart(8, "0");
}

/** The value(s) at `path` in `doc`: for `a.b[]`, every element of the array at `a.b`. */
export function valuesAt(doc: JsonObject, path: string[]): Json[] {
  let node: Json | undefined = doc;
  for (const part of path) {
    if (part === "[]") return Array.isArray(node) ? node : [];
    node = isObject(node) ? node[part] : undefined;
  }
  return node === undefined ? [] : [node];
}

class PathIndex<T extends Indexed> {
  private readonly byValue = new Map<string, Set<T>>();
  private sorted: string[] | undefined;

  constructor(private readonly path: string[]) {}

  add(item: T, doc: JsonObject): void {
    for (const value of valuesAt(doc, this.path)) {
      const key = indexKey(value)!;
      let set = this.byValue.get(key);
      if (!set) {
        this.byValue.set(key, (set = new Set()));
        this.sorted = undefined;
      }
      set.add(item);
    }
  }

  remove(item: T, doc: JsonObject): void {
    for (const value of valuesAt(doc, this.path)) {
      const key = indexKey(value)!;
      const set = this.byValue.get(key);
      if (!set) continue;
      set.delete(item);
      if (set.size === 0) {
        this.byValue.delete(key);
        this.sorted = undefined;
      }
    }
  }

  equal(value: Json): Set<T> {
    return this.byValue.get(indexKey(value)!) ?? new Set();
  }

  /** Items whose value lies in the range, bounds as index keys (either may be open). */
  range(low: { key: string; inclusive: boolean } | undefined, high: { key: string; inclusive: boolean } | undefined): Set<T> {
    this.sorted ??= [...this.byValue.keys()].sort();
    const keys = this.sorted;
    // Cosmos DB compares only values of the same type: a range on strings never matches numbers.
    const type = (low ?? high)!.key[0];
    let start = low ? lowerBound(keys, low.key) : lowerBound(keys, type);
    if (low && !low.inclusive && keys[start] === low.key) start++;
    const result = new Set<T>();
    for (let i = start; i < keys.length && keys[i][0] === type; i++) {
      if (high && (keys[i] > high.key || (!high.inclusive && keys[i] === high.key))) break;
      for (const item of this.byValue.get(keys[i])!) result.add(item);
    }
    return result;
  }

  /** Every item that has a value at the path. */
  defined(): Set<T> {
    const result = new Set<T>();
    for (const set of this.byValue.values()) for (const item of set) result.add(item);
    return result;
  }
}

/**
 * A full-text index of one path (the container's `fullTextIndexes`): each English term of the
 * text there (full-text-analysis.ts) to the items holding it, so that FullTextContains and its
 * kin load only the items that hold their keywords.
 */
class TermIndex<T extends Indexed> {
  private readonly byTerm = new Map<string, Set<T>>();

  constructor(private readonly path: string[]) {}

  add(item: T, doc: JsonObject): void {
    for (const term of new Set(termsOf(valuesAt(doc, this.path)[0]))) {
      let set = this.byTerm.get(term);
      if (!set) this.byTerm.set(term, (set = new Set()));
      set.add(item);
    }
  }

  remove(item: T, doc: JsonObject): void {
    for (const term of new Set(termsOf(valuesAt(doc, this.path)[0]))) {
      const set = this.byTerm.get(term);
      set?.delete(item);
      if (set?.size === 0) this.byTerm.delete(term);
    }
  }

  /** Items holding a keyword (every word of it); none for a keyword that analyzes to nothing. */
  private holding(keyword: Json): Set<T> {
    return intersect(termsOf(keyword).map((term) => this.byTerm.get(term) ?? new Set<T>())) ?? new Set();
  }

  /** Items holding all the keywords, or any of them. */
  matching(keywords: Json[], all: boolean): Set<T> {
    const sets = keywords.map((keyword) => this.holding(keyword));
    return all ? (intersect(sets) ?? new Set()) : new Set(sets.flatMap((set) => [...set]));
  }
}

/** The items in every set (smallest first); undefined when there is no set at all. */
export function intersect<T>(sets: Set<T>[]): Set<T> | undefined {
  if (sets.length === 0) return undefined;
  const [smallest, ...others] = [...sets].sort((a, b) => a.size - b.size);
  return new Set([...smallest].filter((item) => others.every((set) => set.has(item))));
}

function lowerBound(keys: string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (keys[mid] < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** One pattern of an indexing policy, e.g. `/*`, `/name/?`, `/tags/[]/?`, `/"_etag"/?`. */
function patternParts(pattern: string): { parts: string[]; subtree: boolean } {
  const parts = pattern
    .split("/")
    .filter(Boolean)
    .map((p) => p.replace(/^"(.*)"$/, "$1"));
  const last = parts[parts.length - 1];
  if (last === "*") return { parts: parts.slice(0, -1), subtree: true };
  if (last === "?") return { parts: parts.slice(0, -1), subtree: false };
  return { parts, subtree: true };
}

export class ContainerIndexes<T extends Indexed> {
  private readonly indexes = new Map<string, PathIndex<T> | TermIndex<T>>();

  constructor(
    private policy: JsonObject,
    private readonly everything: () => Iterable<T>,
  ) {}

  /** A new indexing policy: indexes are rebuilt on demand under it. */
  setPolicy(policy: JsonObject): void {
    this.policy = policy;
    this.indexes.clear();
  }

  /**
   * Whether the policy indexes `path`: the most specific matching pattern decides (excluded
   * wins a tie), as in the service.
   */
  covers(path: string[]): boolean {
    if (this.policy.indexingMode === "none") return false;
    let best = -1;
    let included = false;
    const consider = (patterns: unknown, include: boolean) => {
      for (const entry of Array.isArray(patterns) ? patterns : []) {
        if (!isObject(entry) || typeof entry.path !== "string") continue;
        const { parts, subtree } = patternParts(entry.path);
        const matches = subtree
          ? parts.every((p, i) => path[i] === p) && path.length >= parts.length
          : parts.length === path.length && parts.every((p, i) => path[i] === p);
        const specificity = parts.length * 2 + (subtree ? 0 : 1);
        if (matches && (specificity > best || (specificity === best && !include))) {
          best = specificity;
          included = include;
        }
      }
    };
    consider(this.policy.includedPaths, true);
    consider(this.policy.excludedPaths, false);
    return included;
  }

  /** The index of `path`, built now if this is its first use; undefined when the policy excludes the path. */
  at(path: string[]): PathIndex<T> | undefined {
    const key = path.join("/");
    let index = this.indexes.get(key) as PathIndex<T> | undefined;
    if (!index && this.covers(path.filter((p) => p !== "[]"))) {
      index = this.built(key, new PathIndex(path));
    }
    return index;
  }

  /** The full-text index of `path`, built now if this is its first use; undefined when the policy has none on it. */
  fullTextAt(path: string[]): TermIndex<T> | undefined {
    const key = `full-text:${path.join("/")}`;
    let index = this.indexes.get(key) as TermIndex<T> | undefined;
    const declared = Array.isArray(this.policy.fullTextIndexes) ? this.policy.fullTextIndexes : [];
    if (!index && declared.some((entry) => isObject(entry) && entry.path === `/${path.join("/")}`)) {
      index = this.built(key, new TermIndex(path));
    }
    return index;
  }

  private built<I extends PathIndex<T> | TermIndex<T>>(key: string, index: I): I {
    for (const item of this.everything()) index.add(item, item.doc());
    this.indexes.set(key, index);
    return index;
  }

  /** Keeps every built index in step with a write (`before`/`after` undefined for a create/delete). */
  update(item: { before?: T; after?: T }): void {
    if (this.indexes.size === 0) return;
    const beforeDoc = item.before?.doc();
    const afterDoc = item.after?.doc();
    for (const index of this.indexes.values()) {
      if (item.before && beforeDoc) index.remove(item.before, beforeDoc);
      if (item.after && afterDoc) index.add(item.after, afterDoc);
    }
  }
}
