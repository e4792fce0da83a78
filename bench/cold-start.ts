import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "../scripts/bundle";
import { percentile } from "./measure";

export interface ColdStartFigures {
  /** Fresh processes measured per variant. */
  samples: number;
  /** Loading the deployment bundle (dist/deploy/index.js), median and p95 ms. */
  bundled: { p50: number; p95: number; bytes: number };
  /** Loading the tsc output (dist/functions/index.js) and node_modules, as an unbundled package would. */
  unbundled: { p50: number; p95: number };
}

/**
 * Time to load the function app's registrations in a fresh Node.js process: what a cold start
 * pays before the first invocation, apart from the host itself. Each sample is its own process
 * (a warm module cache would hide the cost), which requires the entry files and prints the
 * elapsed time. Outside the Functions worker @azure/functions registers in "test mode", which
 * does the same module loading.
 */
export function measureColdStart(root: string, samples: number): ColdStartFigures {
  // A bundle of its own, so the figure is today's code and dist/deploy stays whatever `npm run build` made.
  const { file } = bundle(root, join(mkdtempSync(join(tmpdir(), "cold-start-")), "index.js"));
  const unbundledEntry = join(root, "dist/functions/index.js");
  const loadMs = (entry: string): number => {
    const script = `const t=performance.now();require(${JSON.stringify(entry)});process.stdout.write(String(performance.now()-t))`;
    return Number(execFileSync(process.execPath, ["-e", script], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  };
  const bundledMs: number[] = [];
  const unbundledMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    // interleaved, so a busy moment hurts both alike
    bundledMs.push(loadMs(file));
    unbundledMs.push(loadMs(unbundledEntry));
  }
  bundledMs.sort((a, b) => a - b);
  unbundledMs.sort((a, b) => a - b);
  return {
    samples,
    bundled: { p50: percentile(bundledMs, 50), p95: percentile(bundledMs, 95), bytes: statSync(file).size },
    unbundled: { p50: percentile(unbundledMs, 50), p95: percentile(unbundledMs, 95) },
  };
}
