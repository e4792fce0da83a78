import type { Container, FeedRange } from "@azure/cosmos";
import { cosmosStatus } from "../../../src/store/failures";

/** One partition key range's lease in the `leases` container, as the change feed processor keeps it. */
export interface LeaseDocument {
  id: string;
  /** The consumer holding it; empty when released. */
  owner: string;
  /** Where its range's change feed continues; empty before the first checkpoint. */
  continuation: string;
  /** Written by the owner on every renewal and checkpoint; an owner silent longer than the expiration has lost it. */
  timestamp: string;
  range: { min: string; max: string };
  _etag?: string;
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

/** The leases of one trigger (`prefix`) on the shared leases container, each write guarded by its ETag. */
export class LeaseStore {
  constructor(
    private readonly container: Container,
    private readonly prefix: string,
  ) {}

  /** Named by the range's bounds, so a restarted consumer finds the same lease. */
  idOf(range: FeedRange): string {
    return `${this.prefix}${range.minInclusive || "00"}-${range.maxExclusive}`;
  }

  /** Creates the leases of ranges that have none yet (as the trigger does on start); existing ones are kept. */
  async ensure(ranges: readonly FeedRange[]): Promise<void> {
    for (const range of ranges) {
      const document: LeaseDocument = {
        id: this.idOf(range),
        owner: "",
        continuation: "",
        timestamp: new Date(0).toISOString(),
        range: { min: range.minInclusive, max: range.maxExclusive },
      };
      try {
        await this.container.items.create(document);
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw error;
      }
    }
  }

  async list(): Promise<LeaseDocument[]> {
    const query = { query: "SELECT * FROM c WHERE STARTSWITH(c.id, @prefix)", parameters: [{ name: "@prefix", value: this.prefix }] };
    const { resources } = await this.container.items.query<LeaseDocument>(query).fetchAll();
    return resources;
  }

  async read(id: string): Promise<LeaseDocument | undefined> {
    const { resource } = await this.container.item(id, id).read<LeaseDocument>();
    return resource;
  }

  /** Takes `document` for `owner` if nobody changed it since it was read; undefined when someone did. */
  async acquire(document: LeaseDocument, owner: string): Promise<HeldLease | undefined> {
    try {
      const next = await this.write({ ...document, owner });
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
        lease.document = await this.write({ ...lease.document, ...change });
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

  private async write(document: LeaseDocument): Promise<LeaseDocument> {
    const { _etag, ...fields } = document;
    const next = { ...fields, timestamp: new Date().toISOString() };
    const { resource } = await this.container.item(document.id, document.id).replace(next, { accessCondition: { type: "IfMatch", condition: _etag! } });
    return resource as LeaseDocument;
  }
}
