import { parentPort, workerData } from "node:worker_threads";
import { startCosmos } from "./index";
import type { FromThread, ThreadOptions } from "./thread";

/** The server's thread (see startCosmosThread): starts it, tells the caller each committed write, stops it when asked. */
async function main(port: NonNullable<typeof parentPort>): Promise<void> {
  const cosmos = await startCosmos(workerData as ThreadOptions);
  const send = (message: FromThread) => port.postMessage(message);
  cosmos.watchItems((change) => send({ type: "items", change: { database: change.database, container: change.container } }));
  port.on("message", (message: { type: string }) => {
    if (message.type !== "stop") return;
    void cosmos.stop().then(() => send({ type: "stopped" }));
  });
  send({ type: "listening", endpoint: cosmos.endpoint, key: cosmos.key });
}

if (!parentPort) throw new Error("thread-main.js is the embedded server's thread: start it with startCosmosThread");
// A failure to start (a port in use, damaged data) reaches the caller as the thread's error.
main(parentPort).catch((error: unknown) =>
  process.nextTick(() => {
    throw error;
  }),
);
