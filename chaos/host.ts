import { spawn, type ChildProcess } from "node:child_process";
import { basename, dirname, join } from "node:path";

/** The repository root, whether this runs compiled (dist/chaos) or from source (chaos, under vitest). */
const ROOT = basename(dirname(__dirname)) === "dist" ? join(__dirname, "../..") : join(__dirname, "..");
/** The compiled `npm start` entry point. */
export const START_SCRIPT = join(ROOT, "dist/local/start.js");
/** The embedded server's own command (`npm run cosmos`), built by tsc -b. */
const COSMOS_CLI = join(ROOT, "packages/embedded-cosmos/dist/cli.js");

export interface HostProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once the banner is printed, with the API's base URL and the Cosmos DB endpoint and key it printed. */
  ready: Promise<{ url: string; cosmosEndpoint: string; cosmosKey?: string }>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * Runs a host command as a user would (free ports, request log off), collecting its output. Ready
 * once it prints its banner; `account: true` for the embedded server's own command, ready once it
 * prints its endpoint and key (its URL is then "").
 */
export function runHost(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  options: { detached?: boolean; account?: boolean } = {},
): HostProcess {
  const child = spawn(command, args, {
    env: { ...process.env, PORT: "0", EMBEDDED_COSMOS_PORT: "0", LOG_REQUESTS: "false", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached,
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<{ url: string; cosmosEndpoint: string; cosmosKey?: string }>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = options.account ? "" : /Blog API ready on (\S+)/.exec(output)?.[1];
      const cosmos = (options.account ? /COSMOS_ENDPOINT=(\S+)\s+COSMOS_KEY=(\S+)/ : /COSMOS_ENDPOINT=(\S+)(?: COSMOS_KEY=(\S+))?/).exec(output);
      if (url !== undefined && cosmos) resolve({ url, cosmosEndpoint: cosmos[1], cosmosKey: cosmos[2] });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then((code) => reject(new Error(`exited with ${code} before it was ready:\n${output}`)));
  });
  ready.catch(() => {});
  return { child, output: () => output, ready, exited };
}

/** The embedded Cosmos DB server as a process of its own, as `npm run cosmos` runs it, with its data in `dataDir`. */
export function runAccount(dataDir: string, faults: string | undefined): HostProcess {
  return runHost("node", [COSMOS_CLI, "--port", "0", "--data-dir", dataDir, ...(faults ? ["--faults", faults] : [])], {}, { account: true });
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

/** How many faults the host's embedded Cosmos DB server has injected since it started (0 if it cannot say). */
export async function injectedFaults(cosmosEndpoint: string): Promise<number> {
  try {
    const response = await fetch(new URL("_embedded/faults", cosmosEndpoint), { signal: AbortSignal.timeout(2000) });
    return ((await response.json()) as { total: number }).total;
  } catch {
    return 0;
  }
}
