import { buildSync, type BuildOptions } from "esbuild";
import { appendFileSync, copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { projectRoot } from "../src/store/script-files";
import { replaceFolder } from "./output-folder";

/** The module functions/telemetry.ts loads only with a connection string: the OpenTelemetry SDK's providers, bundled apart. */
const AZURE_MONITOR = "./azure-monitor";
/** The module those providers load with their first batch: Azure Monitor's exporters, bundled apart again. */
const EXPORTERS = "./azure-monitor-exporters";
/** The bundles a deployable folder holds: the app's registrations, the telemetry providers, their exporters and Entra ID's credential beside them. */
export const AZURE_MONITOR_BUNDLE = "azure-monitor.js";
export const EXPORTERS_BUNDLE = "azure-monitor-exporters.js";
export const IDENTITY_BUNDLE = "azure-identity.js";
export const AXIOS_BUNDLE = "axios.js";
export const VALIDATOR_BUNDLE = "validator.js";
export const MOMENT_BUNDLE = "moment.js";
export const CLONE_DEEP_BUNDLE = "clone-deep.js";
export const PROXY_AGENTS_BUNDLE = "proxy-agents.js";
export const BUNDLES = [
  "index.js",
  AZURE_MONITOR_BUNDLE,
  EXPORTERS_BUNDLE,
  IDENTITY_BUNDLE,
  AXIOS_BUNDLE,
  VALIDATOR_BUNDLE,
  CLONE_DEEP_BUNDLE,
  MOMENT_BUNDLE,
  PROXY_AGENTS_BUNDLE,
] as const;

/**
 * The telemetry bundles take each package's ES module build where it has one (the `module`
 * field): the OpenTelemetry packages name their CommonJS build in `main`, which esbuild cannot
 * tree-shake, so every instrument, processor and semantic convention came along (the providers'
 * bundle: 1.1 MiB that way, 0.4 MiB this way).
 */
const ES_MODULES_FIRST = { mainFields: ["module", "main"] };

/** `@azure/identity`, wherever the app or the exporters import it, read from azure-identity.js beside the bundle: loaded by the first require, not by every cold start. */
const IDENTITY_APART = { alias: { "@azure/identity": "./azure-identity" }, external: ["./azure-identity"] };

/**
 * What durable-functions needs only in a durable client, read from files beside the bundle when
 * the first client is made or checks a URL: its `axios` answered by functions/durable-client-http.ts
 * (axios.js), its `validator` by functions/durable-client-url.ts (validator.js), its
 * `lodash/cloneDeep` by functions/durable-client-clone.ts (clone-deep.js).
 */
export const durableClientApart = (root: string) => ({
  alias: {
    axios: join(root, "functions/durable-client-http.ts"),
    validator: join(root, "functions/durable-client-url.ts"),
    "lodash/cloneDeep": join(root, "functions/durable-client-clone.ts"),
  },
  external: ["./axios", "./validator", "./clone-deep"],
});

/**
 * What durable-functions needs only when an orchestration runs, read from a file beside the
 * bundle then: its `moment` answered by functions/durable-timers.ts (moment.js).
 */
export const durableTimersApart = (root: string) => ({
  alias: { moment: join(root, "functions/durable-timers.ts") },
  external: ["./moment"],
});

/**
 * The proxy agents the Azure SDKs' HTTP client makes only for a request through a proxy, read
 * from a file beside the bundle then: both packages answered by functions/proxy-agents-on-demand.ts
 * (proxy-agents.js).
 */
export const proxyAgentsApart = (root: string) => {
  const onDemand = join(root, "functions/proxy-agents-on-demand.ts");
  return { alias: { "https-proxy-agent": onDemand, "http-proxy-agent": onDemand }, external: ["./proxy-agents"] };
};

/** How every bundle is built. */
const COMMON = {
  bundle: true,
  platform: "node",
  // The Function App runs Node.js 22 (infra/app/api.bicep).
  target: "node22",
  format: "cjs",
  sourcemap: "external",
  // Without comments and indentation index.js is a third smaller, and pure ASCII (comments of some
  // packages are not), so a cold start reads and scans less. Names stay: stacks still name each
  // function, and `npm run map-stack` maps their line:column through the source maps.
  minifyWhitespace: true,
  logLevel: "warning",
  // ES modules bundled as CommonJS lose import.meta.url (@azure/identity reads its folder from it): each file's own URL.
  banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { "import.meta.url": "__importMetaUrl" },
} as const satisfies BuildOptions;

/**
 * Every function registration (functions/index.ts) bundled with its dependencies into one
 * file: no node_modules to install or load, and one file to read on a cold start. The
 * OpenTelemetry SDK's providers, which only an app with a connection string loads, are a second
 * file beside it (`azure-monitor.js`), so a cold start without one never reads it; Azure
 * Monitor's exporters, which those providers load with their first batch, a third
 * (`azure-monitor-exporters.js`); Entra ID's credential, which only keyless access and the
 * exporters need, a fourth (`azure-identity.js`); durable-functions' HTTP client and URL check,
 * which only a durable client needs, a fifth and a sixth (`axios.js`, `validator.js`), and the
 * deep copy it makes of the client's binding data, a seventh (`clone-deep.js`); its date library,
 * which only an orchestration needs, an eighth (`moment.js`); the Azure SDKs' HTTP proxy agents,
 * which only a request through a proxy needs, a ninth (`proxy-agents.js`).
 * `@azure/functions-core` is the Functions worker's own module, provided at run time.
 */
export function bundle(root: string, file: string): { file: string; bytes: number } {
  const apart = [IDENTITY_APART, durableClientApart(root), durableTimersApart(root), proxyAgentsApart(root)];
  buildSync({
    ...COMMON,
    entryPoints: [join(root, "functions/index.ts")],
    outfile: file,
    alias: Object.assign({}, ...apart.map((files) => files.alias)),
    external: ["@azure/functions-core", AZURE_MONITOR, ...apart.flatMap((files) => files.external)],
  });
  const folder = dirname(file);
  bundleApart(root, folder, AZURE_MONITOR_BUNDLE, {
    ...ES_MODULES_FIRST,
    // The providers need only the exporter package's sampler. The package declares itself free of
    // side effects, but its dist/esm/package.json (which only sets the module type) hides that from
    // esbuild, so importing the sampler by the package's name would bring every exporter along.
    alias: {
      ...IDENTITY_APART.alias,
      "@azure/monitor-opentelemetry-exporter": join(root, "node_modules/@azure/monitor-opentelemetry-exporter/dist/esm/sampling/rateLimitedSampler.js"),
    },
    external: [EXPORTERS, ...IDENTITY_APART.external],
  });
  bundleApart(root, folder, EXPORTERS_BUNDLE, { ...ES_MODULES_FIRST, ...IDENTITY_APART });
  for (const name of [IDENTITY_BUNDLE, AXIOS_BUNDLE, VALIDATOR_BUNDLE, CLONE_DEEP_BUNDLE, MOMENT_BUNDLE, PROXY_AGENTS_BUNDLE] as const)
    bundleApart(root, folder, name);
  return { file, bytes: statSync(file).size };
}

/** One of the files beside index.js: functions/<name>.ts bundled on its own into `folder`/<name>.js. */
export function bundleApart(root: string, folder: string, name: Exclude<(typeof BUNDLES)[number], "index.js">, options: BuildOptions = {}): void {
  buildSync({ ...COMMON, entryPoints: [join(root, "functions", name.replace(/\.js$/, ".ts"))], outfile: join(folder, name), ...options });
}

/** The deployable folder's name under dist/: what azure.yaml's `dist`, `func start` and the package test read. */
export const DEPLOY_FOLDER = "dist/deploy";

/** Where the bundles' source maps go: beside the deployable folder, never in it (25 MiB that no cold start reads). */
export const sourceMapFolder = (folder: string) => `${folder}-sourcemaps`;

/**
 * Moves the bundles' source maps out of `folder` into `maps`, each bundle naming its map there
 * by a relative path: where the two folders lie side by side (a build), Node.js
 * (`--enable-source-maps`), a debugger and `npm run map-stack` find them; in Azure the path
 * leads nowhere and nothing is read.
 */
function moveSourceMaps(folder: string, maps: string, finalFolder: string): void {
  for (const bundled of BUNDLES) {
    renameSync(join(folder, `${bundled}.map`), join(maps, `${bundled}.map`));
    const link = relative(finalFolder, join(sourceMapFolder(finalFolder), `${bundled}.map`)).replaceAll("\\", "/");
    appendFileSync(join(folder, bundled), `//# sourceMappingURL=${link}\n`);
  }
}

/**
 * THE deployable function app, as a folder: host.json, a package.json whose `main` names the
 * bundle, and the bundle. azd zips it as it is (azure.yaml `dist`), `npm run func` runs the
 * Functions host in it, and the package test loads it from an empty folder. A local.settings.json
 * is copied in for `func start` (azd never ships that file).
 */
export function packageApp(root: string, folder = join(root, DEPLOY_FOLDER)): { folder: string; bytes: number } {
  let bytes = 0;
  replaceFolder(sourceMapFolder(folder), (maps) =>
    replaceFolder(folder, (next) => {
      bundle(root, join(next, "index.js"));
      moveSourceMaps(next, maps, folder);
      bytes = statSync(join(next, "index.js")).size;
      copyFileSync(join(root, "host.json"), join(next, "host.json"));
      const { name, version, description, license } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, string>;
      writeFileSync(join(next, "package.json"), `${JSON.stringify({ name, version, description, license, private: true, main: "index.js" }, null, 2)}\n`);
      if (existsSync(join(root, "local.settings.json"))) copyFileSync(join(root, "local.settings.json"), join(next, "local.settings.json"));
    }),
  );
  return { folder, bytes };
}

if (require.main === module) {
  const { folder, bytes } = packageApp(projectRoot());
  console.log(
    `packaged the function app into ${folder} (index.js ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${BUNDLES.slice(1).join(", ")}, host.json, package.json; source maps in ${basename(sourceMapFolder(folder))})`,
  );
}
