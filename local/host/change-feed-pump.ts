import { setTimeout as sleep } from "node:timers/promises";
import { ChangeFeedStartFrom, StatusCodes, type Container, type FeedRange } from "@azure/cosmos";
import type { ChangeFeedTrigger, PipelineServices } from "../../src/pipeline/triggers";

interface Lease {
  id: string;
  continuation: string;
  owner: string;
  timestamp: string;
}

interface PumpOptions {
  pollMs: number;
  maxItems: number;
  log: (line: string) => void;
}

const toMs = (value: number | { milliseconds?: number; seconds?: number; minutes?: number }) =>
  typeof value === "number" ? value : (value.milliseconds ?? 0) + (value.seconds ?? 0) * 1000 + (value.minutes ?? 0) * 60_000;

/** Waits `ms`, or less if `signal` aborts meanwhile. */
const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * Feeds one container's change feed into its handler, as the Functions Cosmos DB trigger does:
 * one lease per partition key range (feed range) in `leases`, each range read on its own, a
 * checkpoint after each handled batch, the same batch retried with exponential backoff while
 * the handler throws (never skipped), polling when there is nothing new. No order holds across
 * ranges.
 */
export class ChangeFeedPump {
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly container: Container,
    private readonly leases: Container,
    private readonly trigger: ChangeFeedTrigger,
    private readonly services: PipelineServices,
    private readonly options: PumpOptions,
  ) {}

  start(): void {
    const started = this.container
      .getFeedRanges()
      .then((ranges) => {
        this.loops = ranges.map((range) => this.run(range).catch((error: unknown) => this.options.log(`${this.trigger.name} stopped: ${(error as Error).message}`)));
      })
      .catch((error: unknown) => this.options.log(`${this.trigger.name} could not list its feed ranges: ${(error as Error).message}`));
    this.loops = [started];
  }

  async stop(): Promise<void> {
    this.abort.abort();
    // The ranges' loops may have been added after stop began waiting for the start.
    await Promise.all(this.loops);
    await Promise.all(this.loops);
  }

  /** The lease of one range, named by the range's bounds so it survives a restart. */
  private leaseId(range: FeedRange): string {
    return `${this.trigger.leaseContainerPrefix}${range.minInclusive || "00"}-${range.maxExclusive}`;
  }

  /** Takes the range's lease (creating it, as the trigger does for every range on start) and resumes from its checkpoint. */
  private async startFrom(range: FeedRange): Promise<ChangeFeedStartFrom> {
    const id = this.leaseId(range);
    const { resource } = await this.leases.item(id, id).read<Lease>();
    await this.leases.items.upsert<Lease>({ id, continuation: resource?.continuation ?? "", owner: "local-host", timestamp: new Date().toISOString() });
    if (resource?.continuation) return ChangeFeedStartFrom.Continuation(resource.continuation);
    return this.trigger.startFromBeginning ? ChangeFeedStartFrom.Beginning(range) : ChangeFeedStartFrom.Now(range);
  }

  private async run(range: FeedRange): Promise<void> {
    const leaseId = this.leaseId(range);
    const iterator = this.container.items.getChangeFeedIterator({ changeFeedStartFrom: await this.startFrom(range), maxItemCount: this.options.maxItems });
    let failures = 0;
    while (!this.abort.signal.aborted) {
      try {
        const response = await iterator.readNext();
        failures = 0;
        if (response.statusCode === StatusCodes.NotModified || response.result.length === 0) {
          await pause(this.options.pollMs, this.abort.signal);
          continue;
        }
        if (!(await this.deliver(response.result, leaseId))) return; // stopped mid-retry: the batch stays unacknowledged
        const lease: Lease = { id: leaseId, continuation: response.continuationToken, owner: "local-host", timestamp: new Date().toISOString() };
        await this.leases.items.upsert(lease);
      } catch (error) {
        // Reading the feed or checkpointing failed (not the handler): the iterator has not moved
        // past an unhandled batch, so wait and read again. A lost checkpoint only means redelivery.
        failures++;
        const delay = this.backoff(failures);
        this.options.log(`${this.trigger.name}: reading the change feed failed (lease ${leaseId}): ${(error as Error).message}; retrying in ${delay} ms`);
        await pause(delay, this.abort.signal);
      }
    }
  }

  /** The trigger's exponential backoff: the minimum interval, doubling, capped at the maximum. */
  private backoff(attempt: number): number {
    const { minimumInterval, maximumInterval } = this.trigger.retry;
    return Math.min(toMs(minimumInterval) * 2 ** (attempt - 1), toMs(maximumInterval));
  }

  /** Calls the handler until it succeeds (the triggers retry forever); false only if the pump was stopped first. */
  private async deliver(documents: unknown[], leaseId: string): Promise<boolean> {
    for (let attempt = 1; !this.abort.signal.aborted; attempt++) {
      try {
        await this.trigger.handler(documents, this.services);
        return true;
      } catch (error) {
        const delay = this.backoff(attempt);
        this.options.log(`${this.trigger.name}: batch of ${documents.length} failed (attempt ${attempt}, lease ${leaseId}): ${(error as Error).message}; retrying in ${delay} ms`);
        await pause(delay, this.abort.signal);
      }
    }
    return false;
  }
}
