import type { Container, FeedRange } from "@azure/cosmos";
import { cosmosStatus } from "./cosmos-failures";

/**
 * A partition key range's lease as the change feed processor of the .NET SDK writes it in the
 * lease container (the change feed trigger's engine): so `npm start`, `func start` and
 * Azure share one lease container, continue from each other's checkpoints, and split the
 * leases between them instead of fighting over them.
 */
interface TriggerLease {
  /** `<prefix><account host>_<database rid>_<collection rid>..<range id>`. */
  id: string;
  /** 0: one lease per partition key range. */
  version: 0;
  LeaseToken: string;
  FeedRange: { Range: { min: string; max: string } };
  /** The consumer holding it; null when released. */
  Owner: string | null;
  /** The change feed's ETag after the last checkpoint (`"<lsn>"`); null before the first. */
  ContinuationToken: string | null;
  properties: Record<string, string>;
  /** Written by the owner on every renewal and checkpoint; an owner silent longer than the expiration has lost it. */
  timestamp: string;
  Mode: "Incremental Feed";
  _etag?: string;
}

/** One lease, as the pump works with it. */
export interface LeaseDocument {
  id: string;
  /** The consumer holding it; empty when released. */
  owner: string;
  /** Where its range's change feed continues, as an `@azure/cosmos` continuation token; empty before the first checkpoint. */
  continuation: string;
  timestamp: string;
  stored: TriggerLease;
}

/** A lease this consumer holds, with the ETag of its last write (every write is conditional on it). */
export interface HeldLease {
  document: LeaseDocument;
  lastWrite: number;
  /** Set when another consumer took it, or this one let it go: its worker stops after the batch in hand. */
  lost: boolean;
  /** Set when it was lost because its document was deleted (not taken): it is created again, from the start. */
  deleted?: boolean;
  /** Writes of one lease, one after another (renewals and checkpoints would otherwise race for the ETag). */
  queue: Promise<unknown>;
}

/** Lost the lease: another consumer changed it (412) or it is gone (404). */
export const isLeaseLost = (error: unknown) => cosmosStatus(error) === 412 || cosmosStatus(error) === 404;

/** What names one monitored container's leases: the account's host and the resource ids, and its key ranges by their bounds. */
interface Scope {
  prefix: string;
  collectionRid: string;
  rangeIds: Map<string, string>;
}

const boundsOf = (min: string, max: string) => `${min}|${max}`;

/**
 * The leases of one trigger (its lease prefix) on the shared lease container, each write guarded
 * by its ETag, in the trigger's own schema. Its consumer takes over, on start, the leases this
 * host wrote before it kept that schema (`takeOverEarlierLeases`).
 */
export class LeaseStore {
  private scope?: Promise<Scope>;

  constructor(
    private readonly container: Container,
    private readonly monitored: Container,
    /** The monitored account's host name, as the SDK's endpoint names it (the lease ids carry it). */
    private readonly accountHost: string,
    private readonly prefix: string,
    private readonly log: (line: string) => void = () => {},
  ) {}

  private resolve(): Promise<Scope> {
    this.scope ??= (async () => {
      const [{ resource: collection }, { resource: database }, { resources: ranges }] = await Promise.all([
        this.monitored.read(),
        this.monitored.database.read(),
        this.monitored.readPartitionKeyRanges().fetchAll(),
      ]);
      return {
        prefix: `${this.prefix}${this.accountHost}_${database!._rid}_${collection!._rid}..`,
        collectionRid: collection!._rid,
        rangeIds: new Map(ranges.map((range) => [boundsOf(range.minInclusive, range.maxExclusive), range.id])),
      };
    })();
    this.scope.catch(() => (this.scope = undefined));
    return this.scope;
  }

  /** Named by the range's id under the container's prefix, as the trigger names it, so every consumer finds the same lease. */
  async idOf(range: FeedRange): Promise<string> {
    const scope = await this.resolve();
    const id = scope.rangeIds.get(boundsOf(range.minInclusive, range.maxExclusive));
    if (id === undefined) throw new Error(`no partition key range ${range.minInclusive}-${range.maxExclusive}`);
    return `${scope.prefix}${id}`;
  }

  /** Creates the leases of ranges that have none yet (as the trigger does on start); existing ones are kept. */
  async ensure(ranges: readonly FeedRange[], checkpoints = new Map<string, string>()): Promise<void> {
    const scope = await this.resolve();
    for (const range of ranges) {
      const token = scope.rangeIds.get(boundsOf(range.minInclusive, range.maxExclusive))!;
      const lease: TriggerLease = {
        id: `${scope.prefix}${token}`,
        version: 0,
        LeaseToken: token,
        FeedRange: { Range: { min: range.minInclusive, max: range.maxExclusive } },
        Owner: null,
        ContinuationToken: checkpoints.get(token) ?? null,
        properties: {},
        timestamp: new Date(0).toISOString(),
        Mode: "Incremental Feed",
      };
      try {
        await this.container.items.create(lease);
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw error;
      }
    }
  }

  async list(): Promise<LeaseDocument[]> {
    const scope = await this.resolve();
    const query = { query: "SELECT * FROM c WHERE STARTSWITH(c.id, @prefix)", parameters: [{ name: "@prefix", value: scope.prefix }] };
    const { resources } = await this.container.items.query<TriggerLease>(query).fetchAll();
    return resources.map((lease) => this.view(scope, lease));
  }

  async read(id: string): Promise<LeaseDocument | undefined> {
    const scope = await this.resolve();
    const { resource } = await this.container.item(id, id).read<TriggerLease>();
    return resource && this.view(scope, resource);
  }

  /** Takes `document` for `owner` if nobody changed it since it was read; undefined when someone did. */
  async acquire(document: LeaseDocument, owner: string): Promise<HeldLease | undefined> {
    try {
      const next = await this.write(document, { owner });
      return { document: next, lastWrite: Date.now(), lost: false, queue: Promise.resolve() };
    } catch (error) {
      if (isLeaseLost(error)) return undefined;
      throw error;
    }
  }

  /** Renews or checkpoints a held lease; throws (412) when another consumer has taken it meanwhile. */
  update(lease: HeldLease, change: Partial<Pick<LeaseDocument, "continuation" | "owner">>): Promise<void> {
    const run = lease.queue.then(async () => {
      if (lease.lost) throw Object.assign(new Error(`lease ${lease.document.id} was lost`), { code: 412 });
      try {
        lease.document = await this.write(lease.document, change);
        lease.lastWrite = Date.now();
      } catch (error) {
        if (isLeaseLost(error)) {
          lease.lost = true;
          lease.deleted = cosmosStatus(error) === 404;
        }
        throw error;
      }
    });
    lease.queue = run.catch(() => undefined);
    return run;
  }

  /** The lease as the pump sees it: its checkpoint as an `@azure/cosmos` continuation token for its range. */
  private view(scope: Scope, lease: TriggerLease): LeaseDocument {
    const { min, max } = lease.FeedRange.Range;
    const continuation = lease.ContinuationToken
      ? JSON.stringify({ rid: scope.collectionRid, Continuation: [{ minInclusive: min, maxExclusive: max, continuationToken: lease.ContinuationToken }] })
      : "";
    return { id: lease.id, owner: lease.Owner ?? "", continuation, timestamp: lease.timestamp, stored: lease };
  }

  private async write(document: LeaseDocument, change: Partial<Pick<LeaseDocument, "continuation" | "owner">>): Promise<LeaseDocument> {
    const scope = await this.resolve();
    const { _etag, ...fields } = document.stored;
    const next: TriggerLease = {
      ...fields,
      Owner: change.owner === undefined ? fields.Owner : change.owner || null,
      ContinuationToken: change.continuation === undefined ? fields.ContinuationToken : checkpointOf(change.continuation),
      timestamp: new Date().toISOString(),
    };
    const { resource } = await this.container.item(document.id, document.id).replace(next, { accessCondition: { type: "IfMatch", condition: _etag! } });
    return this.view(scope, resource as unknown as TriggerLease);
  }

  /**
   * Leases of this prefix in the schema this host kept before (`<prefix><min>-<max>`, lower-case
   * fields): their checkpoints carried into the trigger's leases, the old documents deleted.
   */
  async takeOverEarlierLeases(): Promise<void> {
    const scope = await this.resolve();
    const query = {
      query: "SELECT * FROM c WHERE STARTSWITH(c.id, @prefix) AND IS_DEFINED(c.continuation) AND IS_DEFINED(c.range)",
      parameters: [{ name: "@prefix", value: this.prefix }],
    };
    const { resources: old } = await this.container.items.query<{ id: string; continuation: string; range: { min: string; max: string } }>(query).fetchAll();
    if (old.length === 0) return;
    const checkpoints = new Map<string, string>();
    const ranges: FeedRange[] = [];
    for (const lease of old) {
      const token = scope.rangeIds.get(boundsOf(lease.range.min, lease.range.max));
      if (token === undefined) continue;
      ranges.push({ minInclusive: lease.range.min, maxExclusive: lease.range.max } as FeedRange);
      const checkpoint = lease.continuation ? checkpointOf(lease.continuation) : null;
      if (checkpoint) checkpoints.set(token, checkpoint);
    }
    await this.ensure(ranges, checkpoints);
    for (const lease of old)
      await this.container
        .item(lease.id, lease.id)
        .delete()
        .catch(() => undefined);
    this.log(`${this.prefix}: ${old.length} leases of the earlier local schema taken over, their checkpoints kept`);
  }
}

/** The change feed's ETag in an `@azure/cosmos` continuation token (one range), as the trigger checkpoints it. */
function checkpointOf(continuation: string): string | null {
  try {
    const token = JSON.parse(continuation) as { Continuation?: { continuationToken?: string }[] };
    return token.Continuation?.[0]?.continuationToken ?? null;
  } catch {
    return null;
  }
}
