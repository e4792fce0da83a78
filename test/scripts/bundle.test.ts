import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, DEPLOY_FOLDER, packageApp, sourceMapFolder } from "../../scripts/bundle";
import { mapStack } from "../../scripts/map-stack";
import { routes } from "../../src/api/routes";
import { activities, orchestrations } from "../../src/pipeline/orchestrations";
import { changeFeedTriggers } from "../../src/pipeline/change-feed-triggers";
import { runToExit } from "../support/process";
import { startCosmos } from "embedded-cosmos";
import { createStore } from "../../src/store/client";
import { createPost } from "../../src/store/posts";
import { provision } from "../../src/store/provision";
import { createUser } from "../../src/store/users";

const root = join(__dirname, "../..");
const recorder = join(__dirname, "../support/functions-core-recorder.cjs");

interface Binding {
  type: string;
  direction: string;
  [property: string]: unknown;
}
interface Recorded {
  metadata: { name: string; bindings: Record<string, Binding> };
}

/**
 * Runs `npm run build` as azd does (the script `build` names), from the repository root, but
 * leaving the tracked docs/openapi.json alone: rewritten here, it would make the test that
 * compares it with the route table pass whatever was committed.
 */
const build = () => runToExit(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root, env: { ...process.env, BUILD_DOCS: "no" } });

/** What azd zips for the api service: the `dist` folder, whole (azd leaves out only local.settings.json and .azure). */
function azdZipContents(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" }).filter((name) => name !== "local.settings.json" && !name.startsWith(".azure"));
}

/** Exactly what azd zips, in a folder with no repository and no node_modules. */
async function deployedSite(): Promise<string> {
  const built = mkdtempSync(join(tmpdir(), "deploy-build-"));
  await packageApp(root, join(built, "deploy"));
  const site = mkdtempSync(join(tmpdir(), "site-"));
  for (const name of azdZipContents(join(built, "deploy"))) cpSync(join(built, "deploy", name), join(site, name));
  rmSync(built, { recursive: true, force: true });
  return site;
}

describe("the deployable function app", () => {
  it("is the folder azure.yaml names, built by npm run build, with no ignore-file patterns and nothing to install remotely", () => {
    const azure = readFileSync(join(root, "azure.yaml"), "utf8");
    const api = /\n {2}api:\n([\s\S]*?)\n {2}web:/.exec(azure)![1];
    expect(api).toMatch(/language: ts/);
    expect(api).toMatch(/host: function/);
    expect(api).toMatch(new RegExp(`dist: ${DEPLOY_FOLDER}`));
    expect(api).toMatch(/remoteBuild: false/);
    // azd refuses 'remoteBuild: false' when the project's .funcignore excludes node_modules; there is none.
    expect(existsSync(join(root, ".funcignore"))).toBe(false);
    expect(existsSync(join(root, DEPLOY_FOLDER, ".funcignore"))).toBe(false);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe("node scripts/build.mjs");
  });

  it("is made whole by two builds running at once in one folder, as azd builds its two services", async () => {
    const docs = join(root, "docs/openapi.json");
    const docsWritten = statSync(docs).mtimeMs;
    const [first, second] = await Promise.all([build(), build()]);
    expect(statSync(docs).mtimeMs).toBe(docsWritten);
    expect(first.code, first.output).toBe(0);
    expect(second.code, second.output).toBe(0);
    expect(`${first.output}${second.output}`).toMatch(/waiting for the build in process \d+/);
    // The source maps stay beside the package, out of what azd zips.
    expect(azdZipContents(join(root, DEPLOY_FOLDER)).sort()).toEqual([
      "axios.js",
      "azure-identity.js",
      "azure-monitor-exporters.js",
      "azure-monitor.js",
      "clone-deep.js",
      "host.json",
      "index.js",
      "moment.js",
      "package.json",
      "proxy-agents.js",
      "validator.js",
    ]);
    expect(readdirSync(sourceMapFolder(join(root, DEPLOY_FOLDER))).sort()).toEqual([
      "axios.js.map",
      "azure-identity.js.map",
      "azure-monitor-exporters.js.map",
      "azure-monitor.js.map",
      "clone-deep.js.map",
      "index.js.map",
      "moment.js.map",
      "proxy-agents.js.map",
      "validator.js.map",
    ]);
    expect(readdirSync(join(root, "dist/web"))).toEqual(expect.arrayContaining(["index.html", "app.js", "styles.css"]));
    expect(existsSync(join(root, "dist/.build.lock"))).toBe(false);
  }, 120_000);

  it("maps a stack trace from the deployed bundle back to the sources (npm run map-stack)", async () => {
    const folder = mkdtempSync(join(tmpdir(), "map-stack-"));
    try {
      await packageApp(root, join(folder, "deploy"));
      const bundled = readFileSync(join(folder, "deploy/index.js"), "utf8").split("\n");
      expect(bundled.at(-2)).toBe("//# sourceMappingURL=../deploy-sourcemaps/index.js.map");
      // A frame in problemResponse, as Azure's logs show it (the folder the host runs the package from).
      // The bundle is minified to long lines: the frame's column says where on its line.
      const index = bundled.findIndex((text) => text.includes("function problemResponse("));
      const column = bundled[index].indexOf("function problemResponse(") + 10;
      const stack = `Error: boom\n    at problemResponse (/home/site/wwwroot/index.js:${index + 1}:${column})\n    at node:internal/process/task_queues:95:5`;
      // Where the function's name stands in its source: the map must lead back there.
      const source = readFileSync(join(root, "src/api/problems.ts"), "utf8").split("\n");
      const line = source.findIndex((text) => text.includes("function problemResponse(")) + 1;
      const sourceColumn = source[line - 1].indexOf("problemResponse(") + 1;
      expect(mapStack(stack, sourceMapFolder(join(folder, "deploy")))).toBe(
        `Error: boom\n    at problemResponse (src/api/problems.ts:${line}:${sourceColumn})\n    at node:internal/process/task_queues:95:5`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);

  it("carries of zod what the app's schemas use, with its one locale (en), not every member of its namespace", async () => {
    const folder = mkdtempSync(join(tmpdir(), "zod-shaken-"));
    try {
      const { file } = await bundle(root, join(folder, "index.js"));
      // The source map names every module that put code in the bundle: a locale that came along is
      // there. locales/index.js, which names them all, is not one (the lazily loaded OpenAPI code
      // keeps a few bytes of it).
      const { sources } = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: string[] };
      const locales = sources.flatMap((source) => /node_modules\/zod\/v4\/locales\/([\w-]+)\.js$/.exec(source)?.[1] ?? []).filter((name) => name !== "index");
      expect(locales).toEqual(["en"]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("loads from an empty folder as the Functions host loads it, registers every function with its bindings, and answers a request", async () => {
    const site = await deployedSite();
    expect(existsSync(join(site, "node_modules"))).toBe(false);
    const { main } = JSON.parse(readFileSync(join(site, "package.json"), "utf8")) as { main: string };
    expect(JSON.parse(readFileSync(join(site, "host.json"), "utf8"))).toMatchObject({ version: "2.0" });

    const script = `
      require(require("node:path").resolve(${JSON.stringify(main)}));
      setImmediate(async () => {
        const core = globalThis.__functionsCore;
        const response = await core.invokeHttp("getOpenApi", "http://localhost/api/openapi.json");
        const body = response.body.string ?? Buffer.from(response.body.bytes).toString("utf8");
        console.log(JSON.stringify({ registered: core.registered.map((r) => ({ metadata: r.metadata })), response: { status: response.statusCode, body, headers: response.headers } }));
      });`;
    const run = spawnSync(process.execPath, ["-r", recorder, "-e", script], { cwd: site, encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(run.status, run.stderr).toBe(0);
    const { registered, response } = JSON.parse(run.stdout.trim().split("\n").pop()!) as {
      registered: Recorded[];
      response: { status: string; body: string; headers: Record<string, string> };
    };
    const byName = new Map(registered.map((r) => [r.metadata.name, r.metadata.bindings]));
    const expected = [
      ...routes.map((r) => r.name),
      ...changeFeedTriggers.map((t) => t.name),
      "backlog",
      ...Object.keys(orchestrations),
      ...Object.keys(activities),
    ];
    expect([...byName.keys()].sort()).toEqual(expected.sort());
    // The backlog timer, on the schedule its app setting gives (infra/main.bicep sets it), with the durable client it counts orchestrations through.
    const backlog = Object.values(byName.get("backlog")!);
    expect(backlog).toContainEqual(expect.objectContaining({ type: "timerTrigger", direction: "in", schedule: "%BACKLOG_SCHEDULE%" }));
    expect(backlog.map((b) => b.type)).toContain("durableClient");

    for (const route of routes) {
      const trigger = Object.values(byName.get(route.name)!).find((b) => b.type === "httpTrigger")!;
      expect(trigger, route.name).toMatchObject({ direction: "in", route: route.route, authLevel: "anonymous", methods: [...route.methods] });
      expect(
        Object.values(byName.get(route.name)!).some((b) => b.type === "http" && b.direction === "out"),
        route.name,
      ).toBe(true);
    }
    for (const consumer of changeFeedTriggers) {
      const bindings = Object.values(byName.get(consumer.name)!);
      expect(
        bindings.find((b) => b.type === "cosmosDBTrigger"),
        consumer.name,
      ).toMatchObject({
        direction: "in",
        connection: "COSMOS",
        databaseName: "%COSMOS_DATABASE%",
        containerName: consumer.containerName,
        leaseContainerName: "leases",
        leaseContainerPrefix: consumer.leaseContainerPrefix,
        createLeaseContainerIfNotExists: false,
        startFromBeginning: consumer.startFromBeginning,
        feedPollDelay: consumer.feedPollDelayMs,
      });
      expect(
        bindings.some((b) => b.type === "durableClient" && b.direction === "in"),
        consumer.name,
      ).toBe(consumer.needsDurableClient);
    }
    for (const name of Object.keys(orchestrations))
      expect(
        Object.values(byName.get(name)!).map((b) => b.type),
        name,
      ).toContain("orchestrationTrigger");
    for (const name of Object.keys(activities))
      expect(
        Object.values(byName.get(name)!).map((b) => b.type),
        name,
      ).toContain("activityTrigger");

    // Entra ID's credential is a file of its own: index.js holds no MSAL and reaches it by the name the bundle gives it.
    const bundled = readFileSync(join(site, main), "utf8");
    expect(bundled).not.toMatch(/^\/\/ node_modules\/@azure\/(msal-node|identity)\//m);
    expect(bundled).toContain('require("./azure-identity.js")');
    const credential = spawnSync(process.execPath, ["-e", `console.log(typeof new (require("./azure-identity.js").DefaultAzureCredential)().getToken)`], {
      cwd: site,
      encoding: "utf8",
      env: { PATH: process.env.PATH },
    });
    expect(credential.stdout.trim(), credential.stderr).toBe("function");

    // With a connection string, as in Azure, Azure Monitor's exporters (a file of their own) load and start beside the registrations.
    const withTelemetry = spawnSync(
      process.execPath,
      ["-r", recorder, "-e", `require(require("node:path").resolve(${JSON.stringify(main)})); console.log(globalThis.__functionsCore.registered.length)`],
      {
        cwd: site,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH,
          APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000001;IngestionEndpoint=https://127.0.0.1:9/",
          APPLICATIONINSIGHTS_STATSBEAT_DISABLED: "true",
        },
      },
    );
    expect(withTelemetry.status, withTelemetry.stderr).toBe(0);
    expect(Number(withTelemetry.stdout.trim().split("\n").pop())).toBe(expected.length);
    expect(`${withTelemetry.stdout}${withTelemetry.stderr}`).not.toMatch(/Failed to load|Error/);

    // The bundle runs, not only registers: the worker's invocation path answers the OpenAPI document.
    expect(Number(response.status)).toBe(200);
    // App Service's CORS exposes no response headers: the function names those a browser on another origin may read.
    const exposed = Object.entries(response.headers).find(([name]) => name.toLowerCase() === "access-control-expose-headers")?.[1] ?? "";
    for (const header of ["ETag", "Location", "Retry-After", "Idempotent-Replayed"]) expect(exposed.split(", "), header).toContain(header);
    expect(JSON.parse(response.body)).toMatchObject({ openapi: "3.1.0" });
  }, 60_000);

  it("searches posts through the worker's invocation path, on the account its settings name", async () => {
    const cosmos = await startCosmos();
    try {
      const store = createStore({ cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blog" } });
      await provision(store.client, "blog");
      const author = await createUser(store, "ann", "ann");
      await createPost(store, "p1", author, { title: "Partition keys", content: "How to choose one." });
      await createPost(store, "p2", author, { title: "Cats", content: "The cat sat on the mat." });
      store.dispose();
      const site = await deployedSite();
      const { main } = JSON.parse(readFileSync(join(site, "package.json"), "utf8")) as { main: string };
      const script = `
        require(require("node:path").resolve(${JSON.stringify(main)}));
        setImmediate(async () => {
          const response = await globalThis.__functionsCore.invokeHttp("search", "http://localhost/api/search?q=partitioning");
          console.log(JSON.stringify({ status: response.statusCode, body: response.body.string ?? Buffer.from(response.body.bytes).toString("utf8") }));
        });`;
      const env = { PATH: process.env.PATH, COSMOS_ENDPOINT: cosmos.endpoint, COSMOS_KEY: cosmos.key, COSMOS_DATABASE: "blog" };
      // Not spawnSync: the embedded server answers from this process.
      const run = await runToExit(process.execPath, ["-r", recorder, "-e", script], { cwd: site, env });
      expect(run.code, run.output).toBe(0);
      const answer = run.output.split("\n").find((line) => line.startsWith('{"status"'));
      expect(answer, run.output).toBeDefined();
      const { status, body } = JSON.parse(answer!) as { status: string; body: string };
      expect(Number(status), body).toBe(200);
      expect((JSON.parse(body) as { items: { postId: string }[] }).items.map((item) => item.postId)).toEqual(["p1"]);
    } finally {
      await cosmos.stop();
    }
  }, 120_000);
});
