/**
 * The local runtime's time: what the durable host's `currentUtcDateTime`, history timestamps
 * and durable timers read, and the embedded server's `_ts` and TTL expiry. The system clock in
 * `npm start`; a manual one in tests, so they order events by moving time forward instead of
 * sleeping.
 */
export interface Clock {
  now(): Date;
  /** Calls `fire` once `when` has come (at once if it has); the returned function cancels it. */
  at(when: Date, fire: () => void): () => void;
}

/**
 * The longest single wait: Node fires a timer of more than 2^31-1 ms (24.8 days) at once, so a
 * later time is waited for a day at a time, as the Durable Functions extension caps each timer.
 */
const LONGEST_WAIT_MS = 24 * 60 * 60 * 1000;

export const systemClock: Clock = {
  now: () => new Date(),
  at(when, fire) {
    let handle: NodeJS.Timeout;
    const wait = () => {
      const remaining = when.getTime() - Date.now();
      handle = remaining > LONGEST_WAIT_MS ? setTimeout(wait, LONGEST_WAIT_MS) : setTimeout(fire, Math.max(0, remaining));
    };
    wait();
    return () => clearTimeout(handle);
  },
};

/** A clock that moves only when told: `advance` fires every timer that comes due, in time order. */
export class ManualClock implements Clock {
  private time: number;
  private readonly due = new Set<{ when: number; fire: () => void }>();

  constructor(start = "2026-01-01T00:00:00.000Z") {
    this.time = Date.parse(start);
  }

  now(): Date {
    return new Date(this.time);
  }

  at(when: Date, fire: () => void): () => void {
    const entry = { when: when.getTime(), fire };
    if (entry.when <= this.time) {
      queueMicrotask(fire);
      return () => {};
    }
    this.due.add(entry);
    return () => void this.due.delete(entry);
  }

  /** The timers armed and not yet fired. */
  get armed(): number {
    return this.due.size;
  }

  /** Moves to the next armed timer and fires it (and any due with it); false when none is armed. */
  advanceToNext(): boolean {
    const next = Math.min(...[...this.due].map((entry) => entry.when));
    if (!Number.isFinite(next)) return false;
    this.advance(next - this.time);
    return true;
  }

  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const next = [...this.due].filter((entry) => entry.when <= until).sort((a, b) => a.when - b.when)[0];
      if (!next) break;
      this.due.delete(next);
      this.time = next.when;
      next.fire();
    }
    this.time = until;
  }
}
