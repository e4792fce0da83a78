import { ChangeFeedStartFrom, StatusCodes, type Container } from "@azure/cosmos";
import type { ChangeFeedTrigger, PipelineServices } from "../../src/pipeline/triggers";

interface Lease {
  id: string;
  continuation: string;
  owner: string;
  timestamp: string;
}

/** Waits `ms`, or less if the pump is stopped meanwhile. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener("abort", wake, { once: true });
  });

const toMs = (value: number | { milliseconds?: number; seconds?: number; minutes?: number }) =>
  typeof value === "number" ? value : (value.milliseconds ?? 0) + (value.seconds ?? 0) * 1000 + (value.minutes ?? 0) * 60_000;

/**
 * Feeds one container's change feed into its handler, as the Functions Cosmos DB trigger does:
 * a checkpoint in `leases` after each handled batch, the same batch retried with exponential
 * backoff while the handler throws (never skipped), polling when there is nothing new.
 */
export class ChangeFeedPump {
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private readonly leaseId: string;

  constructor(
    private readonly container: Container,
    private readonly leases: Container,
    private readonly trigger: ChangeFeedTrigger,
    private readonly services: PipelineServices,
    private readonly options: { pollMs: number; maxItems: number; log: (line: string) => void },
  ) {
    this.leaseId = `${trigger.leaseContainerPrefix}local`;
  }

  start(): void {
    this.loop = this.run().catch((error: unknown) => this.options.log(`${this.trigger.name} stopped: ${(error as Error).message}`));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async startFrom(): Promise<ChangeFeedStartFrom> {
    const { resource } = await this.leases.item(this.leaseId, this.leaseId).read<Lease>();
    if (resource?.continuation) return ChangeFeedStartFrom.Continuation(resource.continuation);
    return this.trigger.startFromBeginning ? ChangeFeedStartFrom.Beginning() : ChangeFeedStartFrom.Now();
  }

  private async run(): Promise<void> {
    const iterator = this.container.items.getChangeFeedIterator({ changeFeedStartFrom: await this.startFrom(), maxItemCount: this.options.maxItems });
    let failures = 0;
    while (!this.abort.signal.aborted) {
      try {
        const response = await iterator.readNext();
        failures = 0;
        if (response.statusCode === StatusCodes.NotModified || response.result.length === 0) {
          await sleep(this.options.pollMs, this.abort.signal);
          continue;
        }
        if (!(await this.deliver(response.result))) return; // stopped mid-retry: the batch stays unacknowledged
        const lease: Lease = { id: this.leaseId, continuation: response.continuationToken, owner: "local-host", timestamp: new Date().toISOString() };
        await this.leases.items.upsert(lease);
      } catch (error) {
        // Reading the feed or checkpointing failed (not the handler): the iterator has not moved
        // past an unhandled batch, so wait and read again. A lost checkpoint only means redelivery.
        failures++;
        const delay = this.backoff(failures);
        this.options.log(`${this.trigger.name}: reading the change feed failed: ${(error as Error).message}; retrying in ${delay} ms`);
        await sleep(delay, this.abort.signal);
      }
    }
  }

  /** The trigger's exponential backoff: the minimum interval, doubling, capped at the maximum. */
  private backoff(attempt: number): number {
    const { minimumInterval, maximumInterval } = this.trigger.retry;
    return Math.min(toMs(minimumInterval) * 2 ** (attempt - 1), toMs(maximumInterval));
  }

  /** Calls the handler until it succeeds (the triggers retry forever); false only if the pump was stopped first. */
  private async deliver(documents: unknown[]): Promise<boolean> {
    for (let attempt = 1; !this.abort.signal.aborted; attempt++) {
      try {
        await this.trigger.handler(documents, this.services);
        return true;
      } catch (error) {
        const delay = this.backoff(attempt);
        this.options.log(`${this.trigger.name}: batch of ${documents.length} failed (attempt ${attempt}): ${(error as Error).message}; retrying in ${delay} ms`);
        await sleep(delay, this.abort.signal);
      }
    }
    return false;
  }
}
