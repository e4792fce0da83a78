import { CosmosClient } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationHeaders } from "../../src/protocol/auth";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/** The embedded server checks master-key signatures as Azure and the emulator do: no key, no data. */
let f: CosmosFixture;
let docs: string;
beforeAll(async () => {
  f = await cosmosFixture();
  const container = await f.container();
  await container.items.create({ id: "secret", pk: "a", text: "private" });
  docs = new URL(`dbs/test/colls/${container.id}/docs`, f.cosmos.endpoint).toString();
});
afterAll(() => f.stop());

const statusOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: { code?: number }) => error.code,
  );

describe("the embedded server's authorization", () => {
  it("answers a request with no Authorization header 401, revealing nothing", async () => {
    for (const url of [docs, new URL("dbs", f.cosmos.endpoint).toString(), f.cosmos.endpoint]) {
      const response = await fetch(url);
      expect(response.status, url).toBe(401);
      expect(await response.text()).not.toContain("private");
    }
  });

  it("answers a client with another key 401", async () => {
    const stranger = new CosmosClient({
      endpoint: f.cosmos.endpoint,
      key: Buffer.from("not-the-key").toString("base64"),
      connectionPolicy: { enableEndpointDiscovery: false },
    });
    expect(await statusOf(stranger.database("test").containers.readAll().fetchAll())).toBe(401);
  });

  it("answers a signature for another resource, or an old date, 401", async () => {
    const forRoot = authorizationHeaders(f.cosmos.key, "GET", "/dbs");
    expect((await fetch(docs, { headers: forRoot })).status).toBe(401);
    const stale = authorizationHeaders(f.cosmos.key, "GET", new URL(docs).pathname, new Date(Date.now() - 60 * 60 * 1000));
    expect((await fetch(docs, { headers: stale })).status).toBe(401);
  });

  it("refuses a signature it has already accepted when it comes with another verb or for another resource", async () => {
    const forRoot = authorizationHeaders(f.cosmos.key, "GET", "/dbs");
    const root = new URL("dbs", f.cosmos.endpoint).toString();
    expect((await fetch(root, { headers: forRoot })).status).toBe(200);
    expect((await fetch(root, { headers: forRoot })).status).toBe(200); // accepted again, from what was checked
    expect((await fetch(docs, { headers: forRoot })).status).toBe(401);
    expect((await fetch(root, { method: "POST", headers: forRoot, body: JSON.stringify({ id: "x" }) })).status).toBe(401);
  });

  it("serves a request signed with the account key, raw or through the SDK", async () => {
    const response = await fetch(docs, { headers: authorizationHeaders(f.cosmos.key, "GET", new URL(docs).pathname) });
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain("private");
    expect((await f.client.database("test").read()).statusCode).toBe(200);
  });
});
