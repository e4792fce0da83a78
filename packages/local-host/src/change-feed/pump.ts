import { setTimeout as sleep } from "node:timers/promises";
import { untraced } from "../telemetry";
import { ChangeFeedStartFrom, StatusCodes, type Container, type FeedRange } from "@azure/cosmos";
import type { CosmosDBTriggerFunction } from "../worker/function-app";
import { cosmosStatus, isStoreUnavailable } from "./cosmos-failures";
import { isLeaseLost, LeaseStore, type HeldLease, type LeaseDocument } from "./leases";
import { LeaseSightings, shareToTake } from "../fair-share";

export interface LeaseTiming {
  /** A lease whose owner has not written it for this long may be taken (the trigger's default: 60 s). */
  expirationMs: number;
  /** How often a held lease is renewed (17 s). */
  renewMs: number;
  /** How often free, expired and excess leases are looked for (13 s). */
  acquireMs: number;
}

export interface PumpOptions {
  /** How long a drained lease waits before it reads its range again (the trigger's feedPollDelay). */
  pollMs: number;
  /**
   * Subscribes to the monitored container's committed writes, where the server runs in this
   * process (returns the unsubscribe). With it a drained lease still waits `pollMs`, but reads
   * again only once a write came or IDLE_POLL_MS passed: the same delay under traffic, and no
   * poll every second when nothing happens.
   */
  changes?: (notify: () => void) => () => void;
  /** With `changes`: the longest a drained lease waits for a write before it reads anyway (IDLE_POLL_MS). */
  idlePollMs?: number;
  maxItems: number;
  /** This consumer's name on its leases. One name per host: a restarted host takes its own leases back at once. */
  owner: string;
  /** The monitored account's host name, as its endpoint names it: the trigger's lease ids carry it. */
  accountHost: string;
  leases: LeaseTiming;
  log: (line: string) => void;
}

/**
 * How often a drained lease that is told of writes reads anyway. The server in this process tells
 * of every write it commits, so this read is only a safety net: it is not the trigger's
 * feedPollDelay (5 s by default), which a pump that is not told of writes keeps. Each read of an
 * idle host costs about 2 ms of CPU (cold code), and 8 leases reading every 5 s were half of it.
 */
export const IDLE_POLL_MS = 30_000;

export const DEFAULT_LEASE_TIMING: LeaseTiming = { expirationMs: 60_000, renewMs: 17_000, acquireMs: 13_000 };

/**
 * A checkpoint the change feed cannot resume from (not JSON, or not a continuation): the SDK
 * throws without a status, or the service answers 400. Outages and throttling are not this.
 */
const isUnreadableContinuation = (error: unknown) => !isStoreUnavailable(error) && (cosmosStatus(error) === undefined || cosmosStatus(error) === 400);

/** Waits `ms`, or less if `signal` aborts meanwhile. */
const pause = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * Feeds one container's change feed into its handler, as the change feed trigger (the
 * change feed processor) does: one lease per partition key range in `leases`, shared out
 * among every consumer of the same trigger (each takes free or expired leases, then steals
 * from the busiest until all hold their share), renewed while held. Delivery is
 * at-least-once: a batch is checkpointed after its handler succeeds; a failing handler gets
 * the same batch again (never skipped); a failed checkpoint or a lease taken by another
 * consumer mid-batch means the batch is delivered again from the last checkpoint. No order
 * holds across ranges.
 * One class for a reason: the leases it balances and the ranges it reads are one map, and a lease
 * lost in the balance must stop its reader before the reader checkpoints again.
 */
export class ChangeFeedPump {
  private readonly abort = new AbortController();
  private readonly leases: LeaseStore;
  private readonly held = new Map<string, HeldLease>();
  /** When each lease was first seen as it is, on this host's clock (see LeaseSightings). */
  private readonly sightings = new LeaseSightings();
  private readonly workers = new Set<Promise<void>>();
  /** The SDK's feed range of each lease (the change feed iterator accepts only its own range objects). */
  private readonly ranges = new Map<string, FeedRange>();
  private balancer: Promise<void> = Promise.resolve();
  /** Set after the first acquire round: a lease missing later was deleted, not yet created. */
  private started = false;
  /** Aborted by the next write the monitored container is told of (with `changes`), then replaced. */
  private nextWrite = new AbortController();
  private unsubscribe = () => {};

  constructor(
    private readonly container: Container,
    leaseContainer: Container,
    /** The function the app registered on this container, invoked as the worker invokes it. */
    private readonly trigger: CosmosDBTriggerFunction,
    private readonly options: PumpOptions,
  ) {
    this.leases = new LeaseStore(leaseContainer, container, options.accountHost, trigger.leaseContainerPrefix, options.log);
  }

  start(): void {
    this.unsubscribe =
      this.options.changes?.(() => {
        this.nextWrite.abort();
        this.nextWrite = new AbortController();
      }) ?? this.unsubscribe;
    this.balancer = this.balance().catch((error: unknown) => this.options.log(`${this.trigger.name} stopped: ${(error as Error).message}`));
  }

  /** Stops taking batches; the batch in hand is finished and checkpointed, then the leases are released for others. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.unsubscribe();
    await this.balancer;
    await Promise.all([...this.workers]);
    await Promise.allSettled([...this.held.values()].map((lease) => this.leases.update(lease, { owner: "" })));
  }

  /** The ids of the leases this consumer holds now. */
  ownedLeases(): string[] {
    return [...this.held.entries()].filter(([, lease]) => !lease.lost).map(([id]) => id);
  }

  private get log() {
    return this.options.log;
  }

  /**
   * The acquire loop: make sure every range has a lease, renew ours, take our share. A lease
   * found missing (deleted by an operator) is created again, so its range is read from the start:
   * at-least-once, never silently stopped.
   */
  private async balance(): Promise<void> {
    for (let failures = 0; !this.abort.signal.aborted;) {
      try {
        // The ranges once per start, as the trigger reads them (the fixed key ranges do not split).
        if (this.ranges.size === 0) {
          await this.leases.takeOverEarlierLeases();
          for (const range of await this.container.getFeedRanges()) this.ranges.set(await this.leases.idOf(range), range);
        }
        await this.renew();
        let all = await this.leases.list();
        const missing = [...this.ranges].filter(([id]) => !all.some((lease) => lease.id === id)).map(([, range]) => range);
        if (missing.length > 0) {
          if (this.started)
            for (const range of missing)
              this.log(`${this.trigger.name}: lease ${await this.leases.idOf(range)} is missing (deleted?): created again, its range is read from the start`);
          await this.leases.ensure(missing);
          all = await this.leases.list();
        }
        await this.takeShare(all);
        this.started = true;
        failures = 0;
        await pause(this.options.leases.acquireMs, this.abort.signal);
      } catch (error) {
        failures++;
        const delay = this.backoff(failures);
        this.log(`${this.trigger.name}: balancing leases failed: ${(error as Error).message}; retrying in ${delay} ms`);
        await pause(delay, this.abort.signal);
      }
    }
  }

  private async renew(): Promise<void> {
    for (const [id, lease] of this.held) {
      if (lease.lost) this.held.delete(id);
      else if (Date.now() - lease.lastWrite >= this.options.leases.renewMs)
        await this.leases.update(lease, {}).catch((error: unknown) => this.onWriteFailure(lease, error));
    }
  }

  /** Takes free and expired leases up to a fair share, then at most one from the consumer holding the most. */
  private async takeShare(all: LeaseDocument[]): Promise<void> {
    const { share, free, steal } = shareToTake(all, new Set(this.held.keys()), this.options.owner, this.options.leases.expirationMs, this.sightings);
    for (const lease of free) {
      if (this.held.size >= share && lease.owner !== this.options.owner) break;
      await this.take(lease);
    }
    if (this.held.size < share && steal) await this.take(steal, `stolen from ${steal.owner}`);
  }

  private async take(document: LeaseDocument, how = "acquired"): Promise<void> {
    const lease = await this.leases.acquire(document, this.options.owner);
    if (!lease) return; // someone else was quicker
    this.held.set(lease.document.id, lease);
    if (how !== "acquired") this.log(`${this.trigger.name}: lease ${lease.document.id} ${how} by ${this.options.owner}`);
    const worker = this.work(lease).finally(() => this.workers.delete(worker));
    this.workers.add(worker);
  }

  private logDeleted(lease: HeldLease): void {
    this.log(`${this.trigger.name}: lease ${lease.document.id} was deleted; it is created again and its range read from the start`);
  }

  private onWriteFailure(lease: HeldLease, error: unknown): void {
    if (lease.deleted) this.logDeleted(lease);
    else if (isLeaseLost(error)) this.log(`${this.trigger.name}: lease ${lease.document.id} was taken by another consumer`);
    else this.log(`${this.trigger.name}: writing lease ${lease.document.id} failed: ${(error as Error).message}`);
  }

  /** The lease's range read from its checkpoint (or, never checkpointed, from the trigger's start). */
  private readFrom(lease: LeaseDocument) {
    const range = this.ranges.get(lease.id)!;
    const start = lease.continuation
      ? ChangeFeedStartFrom.Continuation(lease.continuation)
      : this.trigger.startFromBeginning
        ? ChangeFeedStartFrom.Beginning(range)
        : ChangeFeedStartFrom.Now(range);
    return this.container.items.getChangeFeedIterator({ changeFeedStartFrom: start, maxItemCount: this.options.maxItems });
  }

  /**
   * Reads one range while the lease is ours. A failed read is retried with the same iterator
   * (it has not moved past anything unhandled); after a failed checkpoint it starts over from
   * the last stored one, so the handled batch is delivered again rather than lost.
   */
  private async work(lease: HeldLease): Promise<void> {
    const id = lease.document.id;
    let iterator = this.readFrom(lease.document);
    // Until the first read succeeds, an error that is no status and no outage is the checkpoint's fault.
    let fromCheckpoint = lease.document.continuation !== "";
    for (let failures = 0; !this.abort.signal.aborted && !lease.lost;) {
      let response;
      const writeSinceRead = this.nextWrite.signal;
      try {
        // A poll is no work of its own, so an idle host adds no spans; a batch it finds is traced where it is handled.
        response = await untraced(() => iterator.readNext());
        failures = 0;
        fromCheckpoint = false;
      } catch (error) {
        if (fromCheckpoint && isUnreadableContinuation(error)) {
          this.log(`${this.trigger.name}: continuation of lease ${id} is unreadable (${(error as Error).message}); reading its range from the start`);
          iterator = this.readFrom({ ...lease.document, continuation: "" });
          fromCheckpoint = false;
          continue;
        }
        const delay = this.backoff(++failures);
        this.log(`${this.trigger.name}: change feed of lease ${id} failed: ${(error as Error).message}; retrying in ${delay} ms`);
        await pause(delay, this.abort.signal);
        continue;
      }
      if (response.statusCode === StatusCodes.NotModified || response.result.length === 0) {
        await this.drained(writeSinceRead);
        continue;
      }
      if (!(await this.deliver(response.result, id))) return; // stopped mid-retry: the batch stays unacknowledged
      try {
        await this.leases.update(lease, { continuation: response.continuationToken });
      } catch (error) {
        if (lease.lost) break;
        const delay = this.backoff(++failures);
        this.log(`${this.trigger.name}: checkpoint of lease ${id} failed: ${(error as Error).message}; resuming from the last checkpoint in ${delay} ms`);
        await pause(delay, this.abort.signal);
        const stored = await this.leases.read(id).catch(() => undefined);
        if (stored && stored.owner !== this.options.owner) lease.lost = true;
        else iterator = this.readFrom(stored ?? lease.document);
      }
    }
    if (lease.deleted) this.logDeleted(lease);
    else if (lease.lost) this.log(`${this.trigger.name}: lease ${id} lost to another consumer; it continues from the last checkpoint`);
  }

  /**
   * A drained lease's wait: the poll delay; then, when told of writes and none came since the
   * read began, until one comes or the idle poll delay has passed since the read. The signal is
   * taken before the read, so a write made while the read was under way is not slept through.
   */
  private async drained(writeSinceRead: AbortSignal): Promise<void> {
    await pause(this.options.pollMs, this.abort.signal);
    if (!this.options.changes || writeSinceRead.aborted || this.abort.signal.aborted) return;
    await pause(Math.max(0, (this.options.idlePollMs ?? IDLE_POLL_MS) - this.options.pollMs), AbortSignal.any([this.abort.signal, writeSinceRead]));
  }

  /** The trigger's exponential backoff: the minimum interval, doubling, capped at the maximum. */
  private backoff(attempt: number): number {
    const { minimumIntervalMs, maximumIntervalMs } = this.trigger.retry;
    return Math.min(minimumIntervalMs * 2 ** (attempt - 1), maximumIntervalMs);
  }

  /**
   * Calls the function until it succeeds, as its retry policy says: forever with maxRetryCount
   * -1 (the app's), else up to that many retries, after which the batch is checkpointed past, as
   * in Azure. False only if the pump was stopped first.
   */
  private async deliver(documents: unknown[], leaseId: string): Promise<boolean> {
    const { maxRetryCount } = this.trigger.retry;
    for (let attempt = 1; !this.abort.signal.aborted; attempt++) {
      try {
        await this.trigger.invoke(documents);
        return true;
      } catch (error) {
        const failed = `${this.trigger.name}: batch of ${documents.length} failed (attempt ${attempt}, lease ${leaseId}): ${(error as Error).message}`;
        if (maxRetryCount >= 0 && attempt > maxRetryCount) {
          this.log(`${failed}; its retries are spent, so it is skipped`);
          return true;
        }
        const delay = this.backoff(attempt);
        this.log(`${failed}; retrying in ${delay} ms`);
        await pause(delay, this.abort.signal);
      }
    }
    return false;
  }
}
