import { workerData, type MessagePort } from "node:worker_threads";
import { runInSandbox } from "./sandbox";
import { post, receive, TO_HOST, TO_THREAD, type FromScriptThread, type ToScriptThread } from "./script-thread";

// The script thread's entry (see ScriptThread): runs each script in its sandbox, and blocks on
// the server's answer to each collection call, as the call is synchronous for the script.
const { port, signals } = workerData as { port: MessagePort; signals: Int32Array };

// A promise a script rejects and never handles is the script's own affair, not this thread's end.
process.on("unhandledRejection", () => {});

function send(message: FromScriptThread): void {
  post(port, signals, TO_HOST, message);
}

function call(run: number, op: string, args: string): string {
  send({ type: "call", run, op, args });
  for (;;) {
    const message = receive<ToScriptThread>(port, signals, TO_THREAD)!;
    if (message.type === "reply" && message.run === run) return message.text;
  }
}

port.on("message", (message: ToScriptThread) => {
  if (message.type !== "run") return; // a reply the stopped run it was for no longer waits for
  const { run } = message;
  const output = runInSandbox(message.body, { input: message.input, call: (op, args) => call(run, op, args) });
  send({ type: "done", run, output });
});
