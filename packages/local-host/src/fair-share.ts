/**
 * Which leases a consumer takes, as the change feed processor and the Durable Functions
 * storage provider share work among the instances of one app: free and expired leases first
 * (its own name on a lease it does not run first of all: a previous run of this consumer), up
 * to a fair share; then, still short of it, one from the consumer holding the most.
 */

/** A lease as the sharing reads it. */
export interface SharedLease {
  id: string;
  /** The consumer holding it; empty when released. */
  owner: string;
  /** When its owner last wrote it (ISO 8601): an owner silent longer than the expiration has lost it. */
  timestamp: string;
}

export interface ShareToTake<L extends SharedLease> {
  /** How many leases make this consumer's fair share. */
  share: number;
  /** Free, expired or its own, in the order to try; stop once the share is held. */
  free: L[];
  /** One lease of the busiest other consumer, if it holds more than the share: taken only when the free ones fall short. */
  steal?: L;
}

/**
 * When this consumer first saw each lease as it is now (owner and timestamp), on its own clock.
 * A lease's timestamp is its owner's clock: one in the future (a skewed clock, or a key holder
 * who wrote year 9999) or one that cannot be parsed would otherwise never expire. Such a lease
 * expires once it has stayed unchanged for the expiration interval, as this host measures it.
 */
export class LeaseSightings {
  private readonly seen = new Map<string, { owner: string; timestamp: string; since: number }>();

  /** Whether `lease` has lost its owner: written longer ago than `expirationMs`, or unchanged that long here. */
  expired(lease: SharedLease, expirationMs: number, now: number): boolean {
    const last = this.seen.get(lease.id);
    const sighting =
      last && last.owner === lease.owner && last.timestamp === lease.timestamp ? last : { owner: lease.owner, timestamp: lease.timestamp, since: now };
    this.seen.set(lease.id, sighting);
    const written = Date.parse(lease.timestamp);
    if (Number.isFinite(written) && written <= now && now - written > expirationMs) return true;
    return now - sighting.since > expirationMs;
  }
}

export function shareToTake<L extends SharedLease>(
  all: readonly L[],
  held: ReadonlySet<string>,
  me: string,
  expirationMs: number,
  sightings: LeaseSightings,
  now = Date.now(),
): ShareToTake<L> {
  const verdicts = new Map(all.map((lease) => [lease.id, sightings.expired(lease, expirationMs, now)]));
  const expired = (lease: L) => verdicts.get(lease.id)!;
  const mine = (lease: L) => lease.owner === me;
  const owners = new Set(all.filter((lease) => lease.owner && !expired(lease)).map((lease) => lease.owner));
  owners.add(me);
  const share = Math.ceil(all.length / owners.size);
  const free = all.filter((lease) => !held.has(lease.id) && (mine(lease) || !lease.owner || expired(lease))).sort((a, b) => Number(mine(b)) - Number(mine(a)));
  const byOwner = new Map<string, L[]>();
  for (const lease of all) if (lease.owner && !mine(lease) && !expired(lease)) byOwner.set(lease.owner, [...(byOwner.get(lease.owner) ?? []), lease]);
  const busiest = [...byOwner.values()].sort((a, b) => b.length - a.length)[0];
  return { share, free, steal: busiest && busiest.length > share ? busiest[0] : undefined };
}
