import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** A process's resident memory now, in MB (Linux). */
export const rssMB = (child: ChildProcess) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) / 1024);

/**
 * Resolves with the match of `pattern` once the child's output (stdout and stderr) holds it: how a
 * server started here says where it listens. Rejects, with that output, if the child exits first.
 */
export function announced(child: ChildProcess, pattern: RegExp, name: string): Promise<RegExpExecArray> {
  let output = "";
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) resolve(match);
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}: ${output}`)));
  });
}

/** A whole local system (`npm start -- --in-memory`) of one checkout, as a process of its own. */
export interface RunningSystem {
  api: string;
  /** Its embedded Cosmos DB server (the local key signs requests). */
  cosmosEndpoint: string;
  /** CPU seconds (user + system) its processes (npm and the host it started) have used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** Clock ticks per second, the unit of /proc's CPU times. */
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds used so far by the live processes of one process group, from /proc (Linux). */
export function groupCpuSeconds(group: number): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // After the command's parenthesis: state, ppid, pgrp, ... utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === group) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

export async function startSystem(directory: string, secret: string): Promise<RunningSystem> {
  const [port, cosmosPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    EMBEDDED_COSMOS_PORT: String(cosmosPort),
    AUTH_DEV_SECRET: secret,
    LOG_REQUESTS: "false",
  };
  for (const name of Object.keys(env)) if (name.startsWith("OTEL_EXPORTER_") || name === "COSMOS_ENDPOINT") delete env[name];
  const child: ChildProcess = spawn("npm", ["start", "--silent", "--", "--in-memory"], {
    cwd: directory,
    env,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let errors = "";
  child.stderr!.on("data", (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-2000)));
  const api = `http://127.0.0.1:${port}/api`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (const deadline = Date.now() + 120_000; ;) {
    if (child.exitCode !== null) throw new Error(`npm start in ${directory} exited with ${child.exitCode}: ${errors}`);
    const ready = await fetch(`${api}/feed`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`npm start in ${directory} did not answer within 120 s: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    api,
    cosmosEndpoint: `http://127.0.0.1:${cosmosPort}/`,
    cpuSeconds: () => groupCpuSeconds(child.pid!),
    async stop() {
      // npm and the node it started: the whole process group, as Ctrl-C reaches them.
      process.kill(-child.pid!, "SIGINT");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
    },
  };
}
