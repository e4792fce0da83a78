import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AZURE_MONITOR_BUNDLE, bundle, IDENTITY_BUNDLE } from "../scripts/bundle";
import { percentile } from "./measure";

export interface ColdStartFigures {
  /** Fresh processes measured per variant. */
  samples: number;
  /** Loading the deployment bundle (dist/deploy/index.js), median and p95 ms. */
  bundled: { p50: number; p95: number; bytes: number };
  /** The same with an Application Insights connection string set, as in Azure: Azure Monitor's exporters (azure-monitor.js) and Entra ID's credential (azure-identity.js) load too; bytes of the two. */
  withTelemetry: { p50: number; p95: number; bytes: number };
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
  const loadMs = (entry: string, env: NodeJS.ProcessEnv = {}): number => {
    // The figure on a line of its own: an SDK may print a line of its own as it starts.
    const script = `const t=performance.now();require(${JSON.stringify(entry)});process.stdout.write("\\n"+(performance.now()-t))`;
    const environment = { ...process.env, APPLICATIONINSIGHTS_CONNECTION_STRING: "", ...env };
    const output = execFileSync(process.execPath, ["-e", script], { cwd: root, env: environment, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    return Number(output.trim().split("\n").pop());
  };
  // A connection string of the documented form; nothing is sent in the moment the process lives.
  const telemetry = { APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/" };
  const bundledMs: number[] = [];
  const telemetryMs: number[] = [];
  const unbundledMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    // interleaved, so a busy moment hurts all alike
    bundledMs.push(loadMs(file));
    telemetryMs.push(loadMs(file, telemetry));
    unbundledMs.push(loadMs(unbundledEntry));
  }
  const figures = (ms: number[]) => {
    ms.sort((a, b) => a - b);
    return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
  };
  return {
    samples,
    bundled: { ...figures(bundledMs), bytes: statSync(file).size },
    withTelemetry: {
      ...figures(telemetryMs),
      bytes: [AZURE_MONITOR_BUNDLE, IDENTITY_BUNDLE].reduce((sum, name) => sum + statSync(join(dirname(file), name)).size, 0),
    },
    unbundled: figures(unbundledMs),
  };
}
