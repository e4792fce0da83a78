import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialUnavailableError } from "@azure/identity";
import { startCosmos } from "embedded-cosmos";
import { problemResponse } from "../../src/api/problems";
import { apiFixture, type ApiFixture, type ApiResponse } from "../support/api";
import { localSystem, type Client } from "../support/system";

/** A store that cannot answer is the service's trouble, not the client's: 503 with Retry-After, never 500 or a 404 that lies. */
function expectUnavailable(response: { status: number; headers: Record<string, string> | Headers; body: ApiResponse["body"] }) {
  const header = (name: string) => (response.headers instanceof Headers ? response.headers.get(name) : response.headers[name]);
  expect(response.status, JSON.stringify(response.body)).toBe(503);
  expect(Number(header("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(header("content-type")).toBe("application/problem+json");
  expect(response.body).toMatchObject({ status: 503, title: "Service Unavailable" });
}

describe("Cosmos DB failing a request (timeouts, unavailable, retry-with)", () => {
  let api: ApiFixture;
  beforeAll(async () => {
    api = await apiFixture({
      cosmos: {
        faults: {
          rules: [
            { effect: "503", rate: 1, operations: ["read"], containers: ["posts"] },
            { effect: "408", rate: 1, operations: ["sproc"] },
            { effect: "449", rate: 1, operations: ["write"], containers: ["posts"] },
          ],
        },
      },
    });
    await api.user("alice");
  });
  afterAll(() => api.stop());

  it("answers 503 with Retry-After for 503 on a read, 408 on a stored procedure and 449 on a write", async () => {
    expectUnavailable(await api.request("GET", "/api/posts/p1"));
    expectUnavailable(await api.request("POST", "/api/posts/p1/likes", { as: "alice" }));
    expectUnavailable(await api.request("POST", "/api/posts", { as: "alice", body: { title: "t", content: "c" } }));
  });
});

describe("Cosmos DB refusing the app's own identity (a role assignment missing or still propagating)", () => {
  let api: ApiFixture;
  const logs: string[] = [];
  beforeAll(async () => {
    api = await apiFixture({ cosmos: { faults: { rules: [{ effect: "403", rate: 1, operations: ["read"], containers: ["posts"] }] } } });
    api.onLog((line) => logs.push(line));
  });
  afterAll(() => api.stop());

  it("answers 503 with Retry-After (not 500), and names the reason in the log once", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await api.request("GET", "/api/posts/p1");
      expectUnavailable(response);
      expect(Number(response.headers["retry-after"])).toBe(30);
    }
    expect(logs.filter((line) => line.includes("403/5301"))).toHaveLength(1);
  });
});

describe("the app's credential unable to get a token (no managed identity here, or a misconfigured one)", () => {
  it("is a 503 with Retry-After naming nothing secret, logged once", () => {
    const logs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const response = problemResponse(new CredentialUnavailableError("ManagedIdentityCredential: no managed identity endpoint found."), (message) =>
        logs.push(message),
      );
      expect(response.status).toBe(503);
      expect((response.headers as Record<string, string>)["retry-after"]).toBe("30");
      expect(JSON.stringify(response.jsonBody)).not.toContain("ManagedIdentity");
    }
    expect(logs.filter((line) => line.includes("CredentialUnavailableError"))).toHaveLength(1);
  });
});

describe("a store outage while running", () => {
  let client: Client;
  let cosmos: Awaited<ReturnType<typeof startCosmos>>;
  beforeAll(async () => {
    cosmos = await startCosmos();
    client = await localSystem({ cosmos: { endpoint: cosmos.endpoint, key: cosmos.key } });
    const created = await client.call("POST", "/users", { as: "bob", body: { username: "bob" } });
    if (created.status !== 201) throw new Error(JSON.stringify(created));
  });
  afterAll(async () => client.stop());

  it("answers reads and writes with 503 and Retry-After while Cosmos DB is unreachable", async () => {
    expect((await client.call("GET", "/users/bob")).status).toBe(200);
    await cosmos.stop();
    const read = await client.call("GET", "/users/bob");
    expectUnavailable({ ...read, headers: read.headers });
    const write = await client.call("POST", "/posts", { as: "bob", body: { title: "t", content: "c" } });
    expectUnavailable({ ...write, headers: write.headers });
  });
});
