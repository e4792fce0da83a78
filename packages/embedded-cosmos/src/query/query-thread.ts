import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { StoredPut } from "../engine/stored-item";
import { CosmosError, requestTimeout } from "../wire/errors";
import type { QueryPage, QuerySpec } from "./query";
import type { ResumeFilter } from "./resume-filter";

/** The live items of a query's scope, as stored, with their `_rid`s: what a query thread evaluates a query over. */
export interface ScopeCopy {
  items: { put: StoredPut; rid: string }[];
  docsSelf: string;
}

/** What a query thread evaluates: a copy of the scope's items, and the request. */
export interface QueryJob extends ScopeCopy {
  spec: QuerySpec;
  resumeFilter: ResumeFilter | undefined;
  continuation: string | undefined;
  maxItemCount: number;
  scanPageItems: number;
  /** The container's user-defined functions the query calls, by name: their bodies, run in a sandbox there. */
  functions?: Record<string, string>;
}

/** The thread's answer: the page, or the error the request fails with. */
export type QueryAnswer = { id: number; page: QueryPage } | { id: number; error: { status: number; code: string; message: string } };

/** Compiled, the thread's entry is beside this file; run from source (a test runner compiling TypeScript), it is the compiled one. */
const threadEntry = () => [join(__dirname, "query-thread-main.js"), join(__dirname, "../../dist/query/query-thread-main.js")].find(existsSync)!;

/** How long the thread may take over one query (the row budget ends any far sooner): then it is ended. */
const THREAD_TIMEOUT_MS = 30_000;

/**
 * Queries whose JOINs can make many rows of one item, and queries that call user-defined
 * functions, are evaluated on a thread of their own, from a copy of the scope's items: the
 * server's thread goes on answering other requests meanwhile, so one client's query never
 * stalls another's reads and writes. A query calling user-defined functions has the time a
 * script has (no row budget bounds what a function does).
 */
export class QueryThread {
  private worker?: Worker;
  /** Settled when the current thread has loaded and takes jobs (or has ended): a job's time starts then. */
  private ready?: Promise<void>;
  private readonly pending = new Map<number, { worker: Worker; resolve: (page: QueryPage) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private jobs = 0;

  constructor(private readonly scriptTimeoutMs: number) {}

  async run(job: QueryJob): Promise<QueryPage> {
    const worker = this.started();
    await this.ready;
    if (this.worker !== worker) throw new CosmosError(503, "ServiceUnavailable", "The query could not be evaluated; retry.");
    const id = ++this.jobs;
    return new Promise<QueryPage>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.fail(worker, requestTimeout("The query did not complete within the allotted time."));
          void this.close();
        },
        job.functions ? this.scriptTimeoutMs : THREAD_TIMEOUT_MS,
      );
      this.pending.set(id, { worker, resolve, reject, timer });
      worker.postMessage({ id, job });
    });
  }

  /** Ends the thread; the next query starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(threadEntry(), { env: {}, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    worker.unref();
    let loaded!: () => void;
    this.ready = new Promise((resolve) => (loaded = resolve));
    worker.on("message", (answer: QueryAnswer | { ready: true }) => {
      if ("ready" in answer) return loaded();
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      clearTimeout(waiting.timer);
      if ("page" in answer) waiting.resolve(answer.page);
      else waiting.reject(new CosmosError(answer.error.status, answer.error.code, answer.error.message));
    });
    // A thread that ends (out of memory, terminated) fails what it held, and only that: the next query starts a new one.
    worker.on("error", () => {});
    worker.on("exit", () => {
      if (this.worker === worker) this.worker = undefined;
      loaded();
      this.fail(worker, new CosmosError(503, "ServiceUnavailable", "The query could not be evaluated; retry."));
    });
    this.worker = worker;
    return worker;
  }

  private fail(worker: Worker, error: Error): void {
    for (const [id, waiting] of this.pending) {
      if (waiting.worker !== worker) continue;
      clearTimeout(waiting.timer);
      waiting.reject(error);
      this.pending.delete(id);
    }
  }
}
