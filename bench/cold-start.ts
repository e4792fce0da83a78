import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bundle } from "../scripts/bundle";
import { fixed as f, percentile } from "./measure";

interface Figure {
  p50: number;
  p95: number;
}

export interface ColdStartFigures {
  /** Fresh processes measured per variant. */
  samples: number;
  /** Loading the deployment bundle (dist/deploy/index.js), median and p95 ms. */
  bundled: Figure & { bytes: number };
  /** The same with an Application Insights connection string set, as in Azure: the OpenTelemetry SDK's providers (azure-monitor.js) load too; its bytes. */
  withTelemetry: Figure & { bytes: number };
  /** Loading the tsc output (dist/functions/index.js) and node_modules, as an unbundled package would. */
  unbundled: Figure;
  /** A baseline's deployment bundle, built by its own bundler, loaded with the same connection string, interleaved with the above. */
  /** The baseline's, with its bundle's size and its telemetry file's (azure-monitor.js), when it has one. */
  baseline?: Figure & { ref: string; bytes: number; telemetryBytes?: number };
}

/** A connection string of the documented form; nothing is sent in the moment the process lives. */
const TELEMETRY = { APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/" };

/** A fresh process that requires `entry` and prints how long that took, in ms. */
function loadMs(cwd: string, entry: string, env: NodeJS.ProcessEnv = {}): number {
  // The figure on a line of its own: an SDK may print a line of its own as it starts.
  const script = `const t=performance.now();require(${JSON.stringify(entry)});process.stdout.write("\\n"+(performance.now()-t))`;
  const environment = { ...process.env, APPLICATIONINSIGHTS_CONNECTION_STRING: "", ...env };
  const output = execFileSync(process.execPath, ["-e", script], { cwd, env: environment, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return Number(output.trim().split("\n").pop());
}

/** The baseline checkout's deployment bundle, made by its own scripts/bundle.ts (compiled first), in a folder of its own. */
function baselineBundle(checkout: string): string {
  const directory = resolve(checkout);
  execFileSync(process.execPath, [join(directory, "node_modules/typescript/bin/tsc"), "-b"], { cwd: directory, stdio: "ignore" });
  const file = join(mkdtempSync(join(tmpdir(), "cold-start-baseline-")), "index.js");
  // Awaited: a baseline's bundle() may be synchronous (older) or asynchronous (since its splits are built with esbuild's plugins).
  const build = `Promise.resolve(require(${JSON.stringify(join(directory, "dist/scripts/bundle.js"))}).bundle(${JSON.stringify(directory)}, ${JSON.stringify(file)})).catch((error) => { console.error(error); process.exit(1); })`;
  execFileSync(process.execPath, ["-e", build], { cwd: directory, stdio: "ignore" });
  if (!existsSync(file)) throw new Error(`the baseline in ${directory} made no bundle at ${file}`);
  return file;
}

const figures = (ms: number[]): Figure => {
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
};

/**
 * Time to load the function app's registrations in a fresh Node.js process: what a cold start
 * pays before the first invocation, apart from the host itself. Each sample is its own process
 * (a warm module cache would hide the cost), which requires the entry files and prints the
 * elapsed time. Outside the Functions worker @azure/functions registers in "test mode", which
 * does the same module loading.
 */
const sizeIfAny = (file: string) => (existsSync(file) ? statSync(file).size : undefined);

export async function measureColdStart(root: string, samples: number, baseline?: { ref: string; directory: string }): Promise<ColdStartFigures> {
  // A bundle of its own, so the figure is today's code and dist/deploy stays whatever `npm run build` made.
  const { file } = await bundle(root, join(mkdtempSync(join(tmpdir(), "cold-start-")), "index.js"));
  const baselineFile = baseline && baselineBundle(baseline.directory);
  const unbundledEntry = join(root, "dist/functions/index.js");
  const ms = { bundled: [] as number[], withTelemetry: [] as number[], unbundled: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < samples; i++) {
    // interleaved, so a busy moment hurts all alike
    ms.bundled.push(loadMs(root, file));
    ms.withTelemetry.push(loadMs(root, file, TELEMETRY));
    ms.unbundled.push(loadMs(root, unbundledEntry));
    if (baseline && baselineFile) ms.baseline.push(loadMs(baseline.directory, baselineFile, TELEMETRY));
  }
  return {
    samples,
    bundled: { ...figures(ms.bundled), bytes: statSync(file).size },
    withTelemetry: { ...figures(ms.withTelemetry), bytes: statSync(join(file, "..", "azure-monitor.js")).size },
    unbundled: figures(ms.unbundled),
    baseline:
      baseline && baselineFile
        ? {
            ...figures(ms.baseline),
            ref: baseline.ref,
            bytes: statSync(baselineFile).size,
            telemetryBytes: sizeIfAny(join(baselineFile, "..", "azure-monitor.js")),
          }
        : undefined,
  };
}

/** The cold start's rows of the full report, beside the baseline's when there is one. */
export function coldStartTable(c: ColdStartFigures): string[] {
  const b = c.baseline;
  const lines: string[] = [];
  lines.push(
    "",
    `| cold start: loading every registration in a fresh process (${c.samples} processes each) | p50 / p95 | ${b ? `${b.ref}: p50 / p95 | ratio | ` : ""}target |`,
    `|---|---|${b ? "---|---|" : ""}---|`,
  );
  const beside = (figure: { p50: number; p95: number }) => (b ? `${f(b.p50, 0)} / ${f(b.p95, 0)} ms | ${f(b.p50 / figure.p50, 2)} | ` : "");
  lines.push(
    `| deployment bundle, dist/deploy/index.js (${f(c.bundled.bytes / 2 ** 20, 1)} MiB) | ${f(c.bundled.p50, 0)} / ${f(c.bundled.p95, 0)} ms | ${b ? "| | " : ""}well under the unbundled figure |`,
  );
  lines.push(
    `| the same with an Application Insights connection string (+ azure-monitor.js, ${f(c.withTelemetry.bytes / 2 ** 20, 1)} MiB)${b ? `, beside ${b.ref}'s bundle (${f(b.bytes / 2 ** 20, 1)} MiB${b.telemetryBytes ? `, azure-monitor.js ${f(b.telemetryBytes / 2 ** 10, 0)} KiB against ${f(c.withTelemetry.bytes / 2 ** 10, 0)}` : ""}) with the same setting` : ""} | ${f(c.withTelemetry.p50, 0)} / ${f(c.withTelemetry.p95, 0)} ms | ${beside(c.withTelemetry)}under 150 ms (${c.withTelemetry.p50 < 150 ? "met" : "not met"}) |`,
  );
  lines.push(
    `| tsc output + node_modules (unbundled) | ${f(c.unbundled.p50, 0)} / ${f(c.unbundled.p95, 0)} ms | ${b ? "| | " : ""}about 300 ms before the bundle |`,
  );
  return lines;
}
