import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationHeaders } from "../../src/protocol/auth";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/**
 * The embedded server's key is public (`npm start` prints it; it is in the source), so the Host
 * header is what keeps a web page out: a page that rebinds its own name to 127.0.0.1 sends that
 * name as Host, and must get nothing, as the API host refuses it.
 */
let f: CosmosFixture;
let open: CosmosFixture;
beforeAll(async () => {
  f = await cosmosFixture();
  open = await cosmosFixture({ allowedHosts: ["blog.example"] });
  await (await f.container({ id: "posts" })).items.create({ id: "p1", pk: "p1", title: "by alice" });
});
afterAll(async () => {
  await f.stop();
  await open.stop();
});

/** One signed request over a raw socket, with the Host header a rebinding page would send. */
function signed(endpoint: string, host: string, method: string, path: string, body = ""): Promise<number> {
  const port = Number(new URL(endpoint).port);
  const headers = { ...authorizationHeaders(f.cosmos.key, method, path), host, "content-length": String(Buffer.byteLength(body)), connection: "close" };
  if (body)
    Object.assign(headers, {
      "content-type": "application/query+json",
      "x-ms-documentdb-isquery": "true",
      "x-ms-documentdb-query-enablecrosspartition": "true",
    });
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\r\n");
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n\r\n${body}`));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])));
    socket.on("error", reject);
  });
}

const query = JSON.stringify({ query: "SELECT * FROM c", parameters: [] });

describe("the embedded Cosmos DB server's door", () => {
  it("refuses a host name that is not loopback (DNS rebinding) with 403, for reads, queries and writes", async () => {
    const port = new URL(f.cosmos.endpoint).port;
    expect(await signed(f.cosmos.endpoint, `evil.example:${port}`, "GET", "/dbs")).toBe(403);
    expect(await signed(f.cosmos.endpoint, `evil.example:${port}`, "POST", "/dbs/test/colls/posts/docs", query)).toBe(403);
    expect(await signed(f.cosmos.endpoint, "a b", "GET", "/dbs")).toBe(400);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `cosmos.localhost:${port}`]) {
      expect(await signed(f.cosmos.endpoint, host, "GET", "/dbs"), host).toBe(200);
    }
    expect(await signed(f.cosmos.endpoint, `localhost:${port}`, "POST", "/dbs/test/colls/posts/docs", query)).toBe(200);
  });

  it("answers the host names LOCAL_ALLOWED_HOSTS lists, and still no others", async () => {
    expect(await signed(open.cosmos.endpoint, "blog.example", "GET", "/dbs")).toBe(200);
    expect(await signed(open.cosmos.endpoint, "evil.example", "GET", "/dbs")).toBe(403);
  });
});
