import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientBindingData } from "local-host";
import { describe, expect, it } from "vitest";
import { bundleEntry } from "../support/bundle-entry";
import { History, replay } from "../support/replay";
import type { OrchestrationContext } from "durable-functions";

/** An orchestrator that waits `waitMs` from its start, then is done. */
const timer = (waitMs: number) =>
  function* (context: OrchestrationContext) {
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + waitMs));
    return "done";
  };

const [AXIOS, VALIDATOR, CLONE_DEEP, MOMENT] = ["axios.js", "validator.js", "clone-deep.js", "moment.js"];

/**
 * What the deployable bundle gives durable-functions in place of the packages it needs only now
 * and then (scripts/bundle.ts): each built apart beside the bundle, and read only when first
 * needed.
 */
describe("durable-functions' rarely needed packages, bundled apart", () => {
  it("gives durable-functions' client its HTTP client, URL check and deep copy from axios.js, validator.js and clone-deep.js, read when the first client is made", async () => {
    // durable-functions bundled as index.js bundles it, beside the axios.js, validator.js and clone-deep.js a package holds.
    const folder = mkdtempSync(join(tmpdir(), "durable-client-"));
    const entry = `import * as df from "durable-functions"; import { InvocationContext } from "@azure/functions";
      export function client(data) {
        const input = df.input.durableClient();
        const context = new InvocationContext({ options: { extraInputs: [input] } });
        context.extraInputs.set(input, data);
        return df.getClient(context);
      }`;
    const clientFile = await bundleEntry(folder, "client.js", entry, [AXIOS, VALIDATOR, CLONE_DEEP]);
    const asked: string[] = [];
    const extension = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          name: "eraseAccount",
          instanceId: "erase-u1",
          runtimeStatus: "Running",
          input: null,
          output: null,
          customStatus: null,
          createdTime: new Date().toISOString(),
          lastUpdatedTime: new Date().toISOString(),
        }),
      );
    });
    await new Promise<void>((resolve) => extension.listen(0, "127.0.0.1", resolve));
    try {
      const loaded = () => [AXIOS, VALIDATOR, CLONE_DEEP].filter((name) => Object.keys(require.cache).includes(join(folder, name)));
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is CommonJS, loaded as the worker loads it
      const { client } = require(clientFile) as {
        client: (data: unknown) => {
          getStatus(id: string): Promise<{ runtimeStatus: string }>;
          createCheckStatusResponse(request: { url: string }, id: string): { json(): Promise<unknown> };
        };
      };
      expect(loaded()).toEqual([]);
      const data = clientBindingData(`http://127.0.0.1:${(extension.address() as AddressInfo).port}`);
      // In Azure (WEBSITE_HOSTNAME names the app) durable-functions takes the binding data as it
      // is; on a local host (no name, or 0.0.0.0) it copies it to point its URLs at the host, and
      // only then needs the deep copy. Another test file may have named a host: each case is set.
      const hostname = process.env.WEBSITE_HOSTNAME;
      let durable: ReturnType<typeof client>;
      try {
        process.env.WEBSITE_HOSTNAME = "blog-api.azurewebsites.net";
        client(data);
        expect(loaded()).toEqual([AXIOS, VALIDATOR]);
        delete process.env.WEBSITE_HOSTNAME;
        durable = client(data);
        expect(loaded()).toEqual([AXIOS, VALIDATOR, CLONE_DEEP]);
      } finally {
        if (hostname === undefined) delete process.env.WEBSITE_HOSTNAME;
        else process.env.WEBSITE_HOSTNAME = hostname;
      }
      expect((await durable.getStatus("erase-u1")).runtimeStatus).toBe("Running");
      expect(asked).toEqual([expect.stringMatching(/^GET \/.*erase-u1/)]);
      // The URL check at work: a status link takes the origin of the request that asked for it.
      const links = (await durable.createCheckStatusResponse({ url: "https://blog.example/api/users/u1" }, "erase-u1").json()) as Record<string, string>;
      expect(links.statusQueryGetUri).toMatch(/^https:\/\/blog\.example\/.*erase-u1/);
    } finally {
      await new Promise((resolve) => extension.close(resolve));
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("gives durable-functions' orchestrations their dates from moment.js, read when the first orchestration runs, short and long timers alike", async () => {
    // The same replay (test/support/replay.ts) bundled as index.js bundles durable-functions, beside the moment.js a package holds.
    const folder = mkdtempSync(join(tmpdir(), "durable-timers-"));
    const replayFile = await bundleEntry(folder, "replay.js", `export { replay } from "./test/support/replay";`, [MOMENT]);
    try {
      const loaded = () => Object.keys(require.cache).includes(join(folder, MOMENT));
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is CommonJS, loaded as the worker loads it
      const bundledReplay = (require(replayFile) as { replay: typeof replay }).replay;
      expect(loaded()).toBe(false);
      // What the bundle decides, against the package itself with moment from node_modules.
      const both = async (history: History, waitMs: number) => {
        const [bundled, unbundled] = [await bundledReplay(timer(waitMs), history), await replay(timer(waitMs), history)];
        expect(bundled).toEqual(unbundled);
        return bundled;
      };
      const hour = 3_600_000;
      const day = 24 * hour;
      const short = new History("timers", null);
      expect((await both(short, hour)).decisions).toEqual([{ type: "CreateTimer", fireAt: new Date(short.now.getTime() + hour).toISOString() }]);
      expect(loaded()).toBe(true);
      // Past the extension's longest timer (6 days) the package waits in steps, by moment's
      // arithmetic: 3 days (the interval), then the 4 left (no longer past the longest).
      const long = new History("timers", null);
      const started = long.now.getTime();
      const firstStep = long.timerCreated(new Date(started + 3 * day));
      long.episode(3 * day).timerFired(firstStep, long.now);
      expect(await both(long, 7 * day)).toMatchObject({ isDone: false });
      const lastStep = long.timerCreated(new Date(started + 7 * day));
      long.episode(4 * day).timerFired(lastStep, long.now);
      expect(await both(long, 7 * day)).toMatchObject({ isDone: true, output: "done" });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
