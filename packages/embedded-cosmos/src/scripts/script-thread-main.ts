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

function call(op: string, args: string): string {
  send({ type: "call", op, args });
  const message = receive<ToScriptThread>(port, signals, TO_THREAD)!;
  if (message.type !== "reply") throw new Error("The server sent a run where a collection call's answer was due.");
  return message.text;
}

port.on("message", (message: ToScriptThread) => {
  if (message.type !== "run") return; // replies are read by call(), as they come
  send({ type: "done", output: runInSandbox(message.body, { input: message.input, call }) });
});
