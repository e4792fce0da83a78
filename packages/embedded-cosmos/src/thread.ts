import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { ItemsChanged } from "./engine/account";
import type { CosmosOptions, RunningCosmos } from "./server-options";

/** What a server on a thread can be given: plain data (a clock or a callback cannot cross to it). */
export type ThreadOptions = Omit<CosmosOptions, "clock" | "onCharged">;

/** Messages from the server's thread. */
export type FromThread = { type: "listening"; endpoint: string; key: string } | { type: "items"; change: ItemsChanged } | { type: "stopped" };

/** Compiled, the thread's entry is beside this file; run from source (a test runner compiling TypeScript), it is the compiled one. */
const threadEntry = () => [join(__dirname, "thread-main.js"), join(__dirname, "../dist/thread-main.js")].find(existsSync)!;

/**
 * The embedded server on a thread of its own, as a database runs apart from the app: its request
 * handling, queries, scripts and journal no longer share the caller's event loop (and, on a
 * machine with a second core, use it). The same server and options as `startCosmos`, and the same
 * handle: watchItems is told of each committed write across the thread; `faults` stays in the
 * thread (its counts are served at `/_faults`). A failure to start (a port in use, damaged data)
 * rejects; a failure after it crashes the process, as it would with the server in it.
 */
export async function startCosmosThread(options: ThreadOptions = {}): Promise<RunningCosmos> {
  const worker = new Worker(threadEntry(), { workerData: options });
  const watchers = new Set<(change: ItemsChanged) => void>();
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  const listening = await new Promise<{ endpoint: string; key: string }>((resolve, reject) => {
    worker.once("error", reject);
    void exited.then(() => reject(new Error("the embedded Cosmos DB thread ended before it listened")));
    worker.on("message", (message: FromThread) => {
      if (message.type === "listening") resolve({ endpoint: message.endpoint, key: message.key });
      else if (message.type === "items") for (const watcher of watchers) watcher(message.change);
      // Server and data directory closed: what is left of the thread (its timers) ends with it.
      else if (message.type === "stopped") void worker.terminate();
    });
  });
  worker.removeAllListeners("error");
  worker.on("error", (error) =>
    process.nextTick(() => {
      throw error;
    }),
  );
  let stopping: Promise<void> | undefined;
  return {
    ...listening,
    watchItems(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    stop() {
      if (!stopping) {
        worker.postMessage({ type: "stop" });
        stopping = exited;
      }
      return stopping;
    },
  };
}
