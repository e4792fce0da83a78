import type { StoredItem } from "./stored-item";

/** Replaced versions the change log may hold before it is compacted (each compaction is one pass over it). */
const SUPERSEDED_BEFORE_COMPACTION = 10_000;

/**
 * A container's change log, per physical partition (key range): the LSN counter of each range
 * and its append-only log in LSN order. The change feed reads it; a version replaced by a later
 * write stays in the log until compaction and is skipped when read (the change feed serves latest
 * versions only).
 */
export class ChangeLog {
  private logs: StoredItem[][];
  private lsns: number[];
  /** Versions replaced since the log was last compacted: each still holds its whole text here. */
  private superseded = 0;

  constructor(
    ranges: number,
    /** Whether `item` is still the stored version of its id (not replaced or deleted since). */
    private readonly isCurrent: (item: StoredItem) => boolean,
  ) {
    this.logs = Array.from({ length: ranges }, () => []);
    this.lsns = Array.from({ length: ranges }, () => 0);
  }

  /** The latest LSN of one key range. */
  currentLsn(range: number): number {
    return this.lsns[range];
  }

  /** The LSN a new write to `range` gets. */
  nextLsn(range: number): number {
    return ++this.lsns[range];
  }

  append(range: number, item: StoredItem): void {
    this.logs[range].push(item);
  }

  /** A version was replaced or deleted. */
  replaced(): void {
    this.superseded++;
  }

  /** Where each range's log ends now: a transaction rolls back to it. */
  mark(): number[] {
    return this.logs.map((log) => log.length);
  }

  rollback(mark: number[]): void {
    this.logs.forEach((log, range) => (log.length = mark[range]));
  }

  /** Current versions in `range` with an LSN above `afterLsn`, in LSN order. */
  *after(range: number, afterLsn: number): Generator<StoredItem> {
    const log = this.logs[range];
    let low = 0;
    let high = log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (log[mid].lsn <= afterLsn) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < log.length; i++) if (this.isCurrent(log[i])) yield log[i];
  }

  /** Drops replaced versions once they add up (a hot post's every counter change is a full copy of its text). */
  compact(liveCount: number): void {
    if (this.superseded > SUPERSEDED_BEFORE_COMPACTION || this.logs.reduce((n, log) => n + log.length, 0) > 2 * liveCount + 1000) {
      this.logs = this.logs.map((log) => log.filter(this.isCurrent));
      this.superseded = 0;
    }
  }

  /** Loading: an item read from the data directory; the range's LSN counter stays ahead of it. */
  loaded(range: number, lsn: number): void {
    this.lsns[range] = Math.max(this.lsns[range], lsn);
  }

  /** After loading: every range's log rebuilt from the stored items, and the counters at least at `lsns`. */
  rebuild(items: Iterable<{ range: number; item: StoredItem }>, lsns: number[] = []): void {
    this.lsns = this.lsns.map((lsn, range) => Math.max(lsn, lsns[range] ?? 0));
    this.logs = this.logs.map(() => []);
    for (const { range, item } of items) this.logs[range].push(item);
    for (const log of this.logs) log.sort((a, b) => a.lsn - b.lsn);
  }

  /** The LSN counters, for a snapshot. */
  counters(): number[] {
    return [...this.lsns];
  }
}
