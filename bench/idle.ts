import { spawn } from "node:child_process";
import { join } from "node:path";

export interface IdleFigures {
  /** How long the host was watched, after it had started and settled. */
  seconds: number;
  /** CPU the host used meanwhile, as a share of one core (percent). */
  percentOfCore: number;
}

/**
 * What `npm start` costs while nobody uses it: the whole local system (embedded Cosmos DB server,
 * the app on the local host with its change feed polls, timers and telemetry) in a process of
 * its own, its CPU time over `seconds` of no traffic after `settleSeconds`, as the process itself
 * counts it (user + system).
 */
export function measureIdle(root: string, seconds: number, settleSeconds = 5): Promise<IdleFigures> {
  const script = `
    const { startLocalSystem } = require(${JSON.stringify(join(root, "dist/local/system.js"))});
    (async () => {
      const system = await startLocalSystem({ port: 0, inMemory: true });
      await new Promise((resolve) => setTimeout(resolve, ${settleSeconds * 1000}));
      const before = process.cpuUsage();
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ${seconds * 1000}));
      const used = process.cpuUsage(before);
      const elapsed = performance.now() - started;
      await system.stop();
      process.stdout.write("\\n" + JSON.stringify({ seconds: elapsed / 1000, percentOfCore: (100 * (used.user + used.system)) / 1000 / elapsed }));
      process.exit(0);
    })();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`the idle host exited with ${code}: ${errors.slice(-500)}`));
      resolve(JSON.parse(output.trim().split("\n").pop()!) as IdleFigures);
    });
  });
}
