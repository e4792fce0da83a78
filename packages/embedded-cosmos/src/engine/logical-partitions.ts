import type { ContainerIndexes } from "../query/indexes";
import type { StoredItem } from "./stored-item";

/** One logical partition: its key (one string shared by all its items), where it lives, and its items by id. */
export interface Partition {
  pk: string;
  epk: string;
  /** The physical partition (key range) holding it. */
  range: number;
  items: Map<string, StoredItem>;
  /** Its own indexes, built when a query of this partition first needs them (Azure's index lookups are scoped by key too). */
  indexes?: ContainerIndexes<StoredItem>;
}

/**
 * Which items a query or change feed read covers: one logical partition; every logical partition
 * under a hierarchical key's first components (`prefix`: their effective key, which begins every
 * such partition's); one key range (optionally narrowed by EPKs); or all.
 */
export type Scope = { pk: string } | { prefix: string } | { range: number; minEpk?: string; maxEpk?: string } | { all: true };

/** Whether an item lies in the scope. */
export function inScope(partitions: Map<string, Partition>, scope: Scope): (item: StoredItem) => boolean {
  if ("pk" in scope) return (item) => item.pk === scope.pk;
  if ("all" in scope) return () => true;
  if ("prefix" in scope) return (item) => partitions.get(item.pk)?.epk.startsWith(scope.prefix) === true;
  return (item) => {
    const partition = partitions.get(item.pk);
    return (
      partition !== undefined &&
      partition.range === scope.range &&
      (scope.minEpk === undefined || partition.epk >= scope.minEpk) &&
      (scope.maxEpk === undefined || partition.epk < scope.maxEpk)
    );
  };
}

/** The items of a scope that pass `keep` (live ones), in insertion (`_rid`) order. */
export function itemsOf(partitions: Map<string, Partition>, keep: (item: StoredItem) => boolean, scope: Scope): StoredItem[] {
  const chosen = "pk" in scope ? [partitions.get(scope.pk)].filter((p): p is Partition => p !== undefined) : [...partitions.values()];
  const within = inScope(partitions, scope);
  const items: StoredItem[] = [];
  for (const partition of chosen) for (const item of partition.items.values()) if (keep(item) && within(item)) items.push(item);
  if (chosen.length > 1) items.sort((a, b) => a.seq - b.seq);
  return items;
}
