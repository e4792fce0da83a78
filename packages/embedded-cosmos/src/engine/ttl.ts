import type { StoredItem } from "./stored-item";

/**
 * Time to live, as the service applies it: an item expires `ttl` seconds after its last write
 * (its own `ttl`, else the container's `defaultTtl`; none when the container has no TTL). An
 * expired item is never served again; the sweep deletes it later.
 */
export class TtlExpiry {
  private readonly expiring = new Set<StoredItem>();

  constructor(private readonly nowSeconds: () => number) {}

  /** Sets when `item` expires under the container's `defaultTtl`, and tracks it if it does. */
  track(item: StoredItem, defaultTtl: unknown): void {
    const ttl = typeof defaultTtl !== "number" ? -1 : (item.ttl ?? defaultTtl);
    if (ttl > 0) {
      item.expiresAt = item.ts + ttl;
      this.expiring.add(item);
    } else {
      item.expiresAt = undefined;
      this.expiring.delete(item);
    }
  }

  /** A version that was replaced or deleted no longer expires. */
  forget(item: StoredItem): void {
    this.expiring.delete(item);
  }

  isLive(item: StoredItem): boolean {
    return item.expiresAt === undefined || item.expiresAt > this.nowSeconds();
  }

  /** The tracked items whose time has come. */
  expired(): StoredItem[] {
    const now = this.nowSeconds();
    return [...this.expiring].filter((item) => item.expiresAt !== undefined && item.expiresAt <= now);
  }
}
