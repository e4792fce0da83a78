import { spawn, type SpawnOptions } from "node:child_process";

/** Runs a command to its end: its exit code and everything it printed, stdout and stderr as they came. */
export function runToExit(command: string, args: string[], options: SpawnOptions = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => resolve({ code, output }));
  });
}
