import { setTimeout as sleep } from "node:timers/promises";
import type { OrchestrationContext, RetryOptions, Task } from "durable-functions";

/** A unit of work an orchestrator yields; the driver runs it and sends back the result. */
class LocalTask {
  constructor(readonly run: () => Promise<unknown>) {}
}

export type Orchestrator = (context: OrchestrationContext) => Generator<Task, unknown, unknown>;
export type Activity = (input: never) => Promise<unknown>;

export interface InstanceStatus {
  name: string;
  runtimeStatus: "Running" | "Completed" | "Failed";
  input: unknown;
  customStatus?: unknown;
  output?: unknown;
  error?: string;
}


/** Runs `work` under durable-functions RetryOptions: attempts, first interval, backoff, cap. */
export async function withRetry<T>(retry: RetryOptions, work: () => Promise<T>, onRetry?: (attempt: number, error: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= retry.maxNumberOfAttempts) throw error;
      onRetry?.(attempt, error);
      const delay = retry.firstRetryIntervalInMilliseconds * Math.pow(retry.backoffCoefficient || 1, attempt - 1);
      await sleep(retry.maxRetryIntervalInMilliseconds > 0 ? Math.min(delay, retry.maxRetryIntervalInMilliseconds) : delay);
    }
  }
}

/**
 * Executes durable orchestrations in this process: the orchestrator generator is driven step
 * by step, activities run as plain async functions (with their retry options), `Task.all`
 * fans out, timers sleep, and the custom status is kept per instance. No replay and no
 * durable state: an orchestration interrupted by a restart starts again from its trigger.
 */
export class LocalDurableRuntime {
  private readonly instances = new Map<string, InstanceStatus & { done: Promise<void> }>();
  private stopped = false;

  constructor(
    private readonly orchestrators: Record<string, Orchestrator>,
    private readonly activities: Record<string, Activity>,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Starts `name` as `instanceId` unless that instance already exists (deduplicates redeliveries). */
  startNew(name: string, instanceId: string, input: unknown): boolean {
    if (this.instances.has(instanceId)) return false;
    const orchestrator = this.orchestrators[name];
    if (!orchestrator) throw new Error(`No orchestration named '${name}'`);
    const status: InstanceStatus & { done: Promise<void> } = { name, runtimeStatus: "Running", input, done: Promise.resolve() };
    this.instances.set(instanceId, status);
    status.done = this.drive(orchestrator, instanceId, status).then(
      (output) => {
        status.runtimeStatus = "Completed";
        status.output = output;
        this.log(`orchestration ${instanceId} completed ${JSON.stringify(output)}`);
      },
      (error: unknown) => {
        status.runtimeStatus = "Failed";
        status.error = (error as Error).message;
        this.log(`orchestration ${instanceId} failed: ${status.error}`);
      },
    );
    return true;
  }

  getStatus(instanceId: string): InstanceStatus | undefined {
    const instance = this.instances.get(instanceId);
    if (!instance) return undefined;
    const { done: _done, ...status } = instance;
    return status;
  }

  /** Waits for every running orchestration (used on shutdown and by tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.done));
  }

  stop(): void {
    this.stopped = true;
  }

  private async drive(orchestrator: Orchestrator, instanceId: string, status: InstanceStatus): Promise<unknown> {
    const generator = orchestrator(this.context(instanceId, status));
    let step = generator.next();
    while (!step.done) {
      if (this.stopped) throw new Error("the local host is shutting down");
      const task = step.value as unknown;
      if (!(task instanceof LocalTask)) throw new Error("An orchestrator yielded something that is not a durable task.");
      try {
        step = generator.next(await task.run());
      } catch (error) {
        step = generator.throw(error);
      }
    }
    return step.value;
  }

  private activity(name: string, input: unknown): Promise<unknown> {
    const activity = this.activities[name];
    if (!activity) return Promise.reject(new Error(`No activity named '${name}'`));
    return activity(input as never);
  }

  /** The part of `context.df` our orchestrations use, with the same names and semantics. */
  private context(instanceId: string, status: InstanceStatus): OrchestrationContext {
    const df = {
      instanceId,
      isReplaying: false,
      get currentUtcDateTime() {
        return new Date();
      },
      getInput: () => status.input,
      setCustomStatus: (value: unknown) => {
        status.customStatus = value;
      },
      callActivity: (name: string, input?: unknown) => new LocalTask(() => this.activity(name, input)),
      callActivityWithRetry: (name: string, retry: RetryOptions, input?: unknown) =>
        new LocalTask(() => withRetry(retry, () => this.activity(name, input), (attempt, error) => this.log(`activity ${name} attempt ${attempt} failed: ${(error as Error).message}; retrying`))),
      createTimer: (fireAt: Date) => new LocalTask(() => sleep(Math.max(0, fireAt.getTime() - Date.now()))),
      Task: {
        all: (tasks: LocalTask[]) => new LocalTask(() => Promise.all(tasks.map((t) => t.run()))),
        any: (tasks: LocalTask[]) => new LocalTask(() => Promise.race(tasks.map((t) => t.run()))),
      },
    };
    // Only the members above exist locally; the cast documents that boundary in one place.
    return { df } as unknown as OrchestrationContext;
  }
}
