import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const START_SCRIPT = join(__dirname, "../../dist/local/host/start.js");

export interface HostProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the base URL once the banner is printed. */
  ready: Promise<string>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** Runs a command the way a user would, collecting its output; `ready` waits for "Blog API ready on <url>". */
export function runHost(command: string, args: string[], env: Record<string, string> = {}, options: { detached?: boolean } = {}): HostProcess {
  const child = spawn(command, args, {
    env: { ...process.env, PORT: "0", EMBEDDED_COSMOS_PORT: "0", LOG_REQUESTS: "false", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached,
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Blog API ready on (\S+)/.exec(output);
      if (match) resolve(match[1]);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((code) => reject(new Error(`exited with ${code} before it was ready:\n${output}`)));
  });
  ready.catch(() => {});
  return { child, output: () => output, ready, exited };
}

/** The process's exit code, or "running" if it has not exited within `ms`. */
export const exitWithin = (host: HostProcess, ms: number): Promise<number | null | "running"> =>
  Promise.race([host.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), ms))]);

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
