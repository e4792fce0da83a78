import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleEntry } from "../support/bundle-entry";

const PROXY_AGENTS = "proxy-agents.js";

/**
 * The Azure SDKs' HTTP client (@typespec/ts-http-runtime, under @azure/core-rest-pipeline and
 * the Cosmos DB SDK) as the deployable bundle gives it its proxy agents: from proxy-agents.js
 * beside the bundle, read when a request first goes through a proxy (scripts/bundle.ts).
 */
describe("the Azure SDKs' proxy agents, bundled apart", () => {
  it("send a request through a proxy with the agents from proxy-agents.js, read only then", async () => {
    const folder = mkdtempSync(join(tmpdir(), "proxy-agents-"));
    const entry = `import { createDefaultHttpClient, createPipelineFromOptions, createPipelineRequest } from "@azure/core-rest-pipeline";
      export async function get(url, proxy) {
        const pipeline = createPipelineFromOptions({ proxyOptions: proxy });
        const response = await pipeline.sendRequest(createDefaultHttpClient(), createPipelineRequest({ url, method: "GET", allowInsecureConnection: true }));
        return { status: response.status, body: response.bodyAsText };
      }`;
    const clientFile = await bundleEntry(folder, "client.js", entry, [PROXY_AGENTS]);
    // A forward proxy: it is sent the whole URL of what the client asks for, and answers for it.
    const asked: string[] = [];
    const proxy = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.end("through the proxy");
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      const loaded = () => Object.keys(require.cache).includes(join(folder, PROXY_AGENTS));
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is CommonJS, loaded as the worker loads it
      const { get } = require(clientFile) as { get: (url: string, proxy: { host: string; port: number }) => Promise<{ status: number; body: string }> };
      expect(loaded()).toBe(false);
      const answer = await get("http://blog.invalid/api/feed", { host: "http://127.0.0.1", port: (proxy.address() as AddressInfo).port });
      expect(answer).toEqual({ status: 200, body: "through the proxy" });
      expect(asked).toEqual(["GET http://blog.invalid/api/feed"]);
      expect(loaded()).toBe(true);
    } finally {
      proxy.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
