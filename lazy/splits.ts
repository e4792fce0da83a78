/**
 * THE lazy loading of the deployment bundle (scripts/bundle.ts builds from this): each heavy
 * dependency a cold start does not need, bundled into a file of its own beside index.js and read
 * by the first `require` that asks for it. A split names what it holds, the file it becomes,
 * what loads it and when; where another package imports it eagerly (durable-functions imports
 * axios as it loads), a stand-in of ours takes its place and requires it on first use.
 */
export interface Split {
  /** The file beside index.js in the deployment package. */
  file: string;
  /** What it holds: each module as the code that loads it names it (a package, or a file of the app by its project path). */
  modules: readonly string[];
  /** The file whose `require` loads it (for a stand-in, the stand-in), and when that runs. */
  loadedBy: { file: string; when: string };
  /** The module other packages get in place of these (project path), and the packages whose eager imports it answers. */
  standIn?: { file: string; for: readonly string[] };
  /** Prefer each package's ES module build (`module`), which esbuild can tree-shake: the OpenTelemetry packages name CommonJS in `main`. */
  esModulesFirst?: boolean;
  /** Packages answered by one of their own files (`alias`), where importing by the package's name would bring all of it. */
  alias?: Readonly<Record<string, string>>;
}

export const SPLITS: readonly Split[] = [
  {
    file: "azure-monitor.js",
    modules: ["functions/azure-monitor/providers"],
    loadedBy: { file: "functions/telemetry.ts", when: "at start-up, only with APPLICATIONINSIGHTS_CONNECTION_STRING set" },
    esModulesFirst: true,
    // The providers need only the exporter package's samplers; its dist/esm/package.json hides from
    // esbuild that the package is free of side effects, so its name would bring every exporter.
    alias: { "@azure/monitor-opentelemetry-exporter": "lazy/azure-monitor-samplers.ts" },
  },
  {
    file: "azure-monitor-exporters.js",
    modules: ["functions/azure-monitor/exporters"],
    loadedBy: {
      file: "functions/azure-monitor/providers.ts",
      when: "when the first batch of telemetry leaves, seconds after start and off any request's path",
    },
    esModulesFirst: true,
  },
  {
    file: "azure-identity.js",
    modules: ["@azure/identity"],
    loadedBy: { file: "src/store/client.ts", when: "when a keyless Cosmos DB client is made (in Azure); the telemetry exporters too" },
  },
  {
    file: "axios.js",
    modules: ["axios"],
    loadedBy: { file: "lazy/axios.ts", when: "when durable-functions makes its first durable client" },
    standIn: { file: "lazy/axios.ts", for: ["axios"] },
  },
  {
    file: "validator.js",
    modules: ["validator/lib/isURL"],
    loadedBy: { file: "lazy/validator.ts", when: "when a durable client first checks a URL" },
    standIn: { file: "lazy/validator.ts", for: ["validator"] },
  },
  {
    file: "clone-deep.js",
    modules: ["lodash/cloneDeep"],
    loadedBy: { file: "lazy/lodash-clone-deep.ts", when: "when a local host's durable client data is first copied (never in Azure)" },
    standIn: { file: "lazy/lodash-clone-deep.ts", for: ["lodash/cloneDeep"] },
  },
  {
    file: "moment.js",
    modules: ["moment"],
    loadedBy: { file: "lazy/moment.ts", when: "when the first orchestration runs" },
    standIn: { file: "lazy/moment.ts", for: ["moment"] },
  },
  {
    file: "proxy-agents.js",
    modules: ["https-proxy-agent", "http-proxy-agent"],
    loadedBy: { file: "lazy/proxy-agents.ts", when: "when the Azure SDKs' HTTP client first sends a request through a proxy" },
    standIn: { file: "lazy/proxy-agents.ts", for: ["https-proxy-agent", "http-proxy-agent"] },
  },
];
