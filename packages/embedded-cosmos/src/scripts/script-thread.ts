import { existsSync } from "node:fs";
import { join } from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import type { RunOutput } from "./sandbox";

/**
 * Messages to the script thread: a run, or the answer to its latest collection call. One run at a
 * time: the server waits for each, and one it stops ends the thread with it.
 */
export type ToScriptThread = { type: "run"; body: string; input: string } | { type: "reply"; text: string };
/** Messages from it: a collection call of the current run, or the run's output. */
export type FromScriptThread = { type: "call"; op: string; args: string } | { type: "done"; output: RunOutput };

/** What the thread is woken by: `signals[0]` counts messages to the host, `signals[1]` to the thread. */
export const TO_HOST = 0;
export const TO_THREAD = 1;

/** Posts a message and wakes the side that waits for it. */
export function post(port: MessagePort, signals: Int32Array, index: number, message: ToScriptThread | FromScriptThread): void {
  port.postMessage(message);
  Atomics.add(signals, index, 1);
  Atomics.notify(signals, index);
}

/** Waits, blocking this thread, for the next message on `port`; undefined once `deadline` (ms since the epoch) has passed. */
export function receive<T>(port: MessagePort, signals: Int32Array, index: number, deadline = Infinity): T | undefined {
  for (;;) {
    const seen = Atomics.load(signals, index);
    const received = receiveMessageOnPort(port);
    if (received) return received.message as T;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    Atomics.wait(signals, index, seen, left === Infinity ? undefined : left);
  }
}

/** Compiled, the thread's entry is beside this file; run from source (a test runner compiling TypeScript), it is the compiled one. */
const threadEntry = () => [join(__dirname, "script-thread-main.js"), join(__dirname, "../../dist/scripts/script-thread-main.js")].find(existsSync)!;

/** Time a new thread has to start, beyond the first script's own limit. */
const START_MS = 2000;

/**
 * Stored procedures and triggers run on a thread of their own, in a node:vm sandbox there. The
 * server's thread waits for each run, as a transaction must, and answers its collection calls. A
 * run past its time limit ends the thread (an endless loop, `Atomics.wait`, promise callbacks
 * that never stop); so does what else a script can do to it (a promise rejected with no handler is
 * ignored there, memory exhausted ends it): the server answers the request and makes a new one.
 */
export class ScriptThread {
  private worker?: Worker;
  private channel?: { port: MessagePort; signals: Int32Array };

  /** Runs `body`; `call` answers its collection calls. The output is the sandbox's, or a timeout. */
  run(body: string, input: string, timeoutMs: number, call: (op: string, args: string) => string): RunOutput {
    const fresh = !this.worker;
    const { port, signals } = this.started();
    post(port, signals, TO_THREAD, { type: "run", body, input });
    const deadline = Date.now() + timeoutMs + (fresh ? START_MS : 0);
    for (;;) {
      const message = receive<FromScriptThread>(port, signals, TO_HOST, deadline);
      if (!message) {
        void this.close();
        return JSON.stringify({ timeout: true });
      }
      if (message.type === "done") return message.output;
      post(port, signals, TO_THREAD, { type: "reply", text: call(message.op, message.args) });
    }
  }

  /** Ends the thread; the next run starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.channel?.port.close();
    this.channel = undefined;
    await worker?.terminate();
  }

  private started(): { port: MessagePort; signals: Int32Array } {
    if (this.worker && this.channel) return this.channel;
    const { port1, port2 } = new MessageChannel();
    const signals = new Int32Array(new SharedArrayBuffer(8));
    // Scripts see no environment; their memory is bounded apart from the server's.
    this.worker = new Worker(threadEntry(), {
      workerData: { port: port2, signals },
      transferList: [port2],
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    this.worker.unref();
    // A thread a script ended is replaced at the next run; its end is no error of the server's.
    this.worker.on("error", () => {});
    this.channel = { port: port1, signals };
    return this.channel;
  }
}
