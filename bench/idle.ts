import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { startSystem } from "./system-process";

export interface IdleFigures {
  /** How long the host was watched, after it had started and settled. */
  seconds: number;
  /** How long after it answered the watch began: start-up's own work (V8's memory reducer among it) is over by then. */
  settleSeconds: number;
  /** CPU the host used meanwhile, as a share of one core (percent). */
  percentOfCore: number;
  /** A named baseline's figure, watched over the same window beside it. */
  baseline?: { ref: string; percentOfCore: number };
}

/**
 * What `npm start` costs while nobody uses it: the whole local system (embedded Cosmos DB server,
 * the app on the local host with its change feed reads, timers and telemetry), started as a user
 * starts it (`npm start -- --in-memory`, a process group of its own), its CPU time over `seconds`
 * of no traffic after `settleSeconds`, as Linux counts it (user + system). With a baseline
 * checkout its system runs beside, idle over the same seconds, and is measured the same way.
 */
export async function measureIdle(
  root: string,
  options: { seconds: number; settleSeconds: number; baseline?: { ref: string; directory: string } },
): Promise<IdleFigures> {
  const secret = randomBytes(32).toString("base64url");
  const systems = await Promise.all([root, ...(options.baseline ? [options.baseline.directory] : [])].map((directory) => startSystem(directory, secret)));
  try {
    await sleep(options.settleSeconds * 1000);
    const before = systems.map((system) => system.cpuSeconds());
    const started = performance.now();
    await sleep(options.seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    const [current, baseline] = systems.map((system, i) => (100 * (system.cpuSeconds() - before[i])) / elapsed);
    return {
      seconds: elapsed,
      settleSeconds: options.settleSeconds,
      percentOfCore: current,
      baseline: options.baseline && { ref: options.baseline.ref, percentOfCore: baseline },
    };
  } finally {
    await Promise.all(systems.map((system) => system.stop()));
  }
}
