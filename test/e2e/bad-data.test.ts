import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDeadLetters } from "../../src/store/dead-letters";
import { localSystem, within, type Client } from "../support/system";

/**
 * Documents written behind the API's back (a migration script, a bug, an edit in Data
 * Explorer) that no consumer can process: each is set aside as a dead letter with its reason,
 * and the rest of the pipeline goes on. What the API serves still matches its schema, and an
 * owner can always repair their own profile.
 */
let app: Client;
beforeAll(async () => {
  app = await localSystem({ policy: { activityAttempts: 2, activityRetryFirstMs: 10, failureBackoffMs: 10, settleMs: 10 } });
  await app.call("POST", "/users", { as: "alice", body: { username: "alice" } });
  await app.call("POST", "/users", { as: "bob", body: { username: "bob" } });
});
afterAll(() => app.stop());

const inFeed = async (postId: string) => (await app.call("GET", "/feed?limit=100")).body.items.some((p: { id: string }) => p.id === postId);
const inList = async (userId: string, postId: string) =>
  (await app.call("GET", `/users/${userId}/posts?limit=100`)).body.items.some((p: { id: string }) => p.id === postId);
const deadLetterOf = async (documentId: string) => (await listDeadLetters(app.system.store)).find((letter) => letter.documentId === documentId);

describe("a malformed post in `posts`", () => {
  it("is set aside with its reason, and the posts after it still reach Q3 and Q6", async () => {
    await app.system.store.posts.items.create({ id: "bad1", postId: "bad1", type: "post", title: 12345, content: null, creationDate: "not-a-date" });
    const posts: string[] = [];
    for (let i = 0; i < 8; i++) posts.push((await app.call("POST", "/posts", { as: "alice", body: { title: `after ${i}`, content: "c" } })).body.id);
    await within(20_000, async () => (await Promise.all(posts.map(async (id) => (await inFeed(id)) && (await inList("alice", id))))).every(Boolean));
    const letter = await within(10_000, () => deadLetterOf("bad1"));
    expect(letter.value).toMatchObject({ source: "posts", documentId: "bad1", partitionKey: "bad1" });
    expect(letter.value.reason).toMatch(/title/);
    expect(letter.value.document).toMatchObject({ title: 12345 });
  });

  it("is never served as it is: the point read is a documented problem, lists leave it out", async () => {
    const read = await app.call("GET", "/posts/bad1");
    expect(read.status).toBe(500);
    expect(read.headers.get("content-type")).toBe("application/problem+json");
    expect(read.body.detail).toMatch(/malformed/);
    expect(JSON.stringify(read.body)).not.toContain("12345");
  });
});

describe("npm run dead-letters", () => {
  // Asynchronously: the embedded server it talks to runs in this very process.
  const run = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const env = { ...process.env, COSMOS_ENDPOINT: app.system.cosmosEndpoint, COSMOS_KEY: app.system.cosmosKey, AUTH_DEV_SECRET: "" };
      execFile(process.execPath, [join(__dirname, "../../dist/scripts/dead-letters.js"), ...args], { env }, (error, stdout, stderr) =>
        resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it("lists the set-aside documents, keeps one still malformed, and replays it once fixed", async () => {
    const letter = (await deadLetterOf("bad1"))!;
    const listed = await run("list");
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(`${letter.id}`);
    expect(listed.stdout).toContain("posts/bad1");

    const early = await run("replay", letter.id);
    expect(early.status).toBe(1);
    expect(early.stdout).toMatch(/still malformed/);

    const { resource } = await app.system.store.posts.item("bad1", "bad1").read();
    await app.system.store.posts.item("bad1", "bad1").replace({
      ...resource,
      userId: "alice",
      userUsername: "alice",
      title: "fixed",
      content: "now well-formed",
      commentCount: 0,
      likeCount: 0,
      creationDate: new Date().toISOString(),
    });
    const replayed = await run("replay", letter.id);
    expect(replayed.status, replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/replayed/);
    await within(20_000, async () => (await inFeed("bad1")) && (await inList("alice", "bad1")));
    expect(await deadLetterOf("bad1")).toBeUndefined();
    expect((await run("replay")).status).toBe(2);
  });
});

describe("a malformed profile in `users`", () => {
  it("is set aside instead of spreading to the user's items, and its owner repairs it with a valid PUT", async () => {
    const post = (await app.call("POST", "/posts", { as: "bob", body: { title: "mine", content: "c" } })).body;
    await app.call("POST", `/posts/${post.id}/comments`, { as: "bob", body: { content: "mine too" } });
    const { resource: profile } = await app.system.store.users.item("bob", "bob").read();
    await app.system.store.users.item("bob", "bob").replace({ ...profile, username: 123, usernameChangedDate: new Date().toISOString() });
    await within(10_000, () => deadLetterOf("bob"));
    // Set aside, it started nothing that could spread it: no propagation, and the items keep the last good name.
    const propagations = (await app.system.durable.queryInstances()).filter(
      (i) => i.name === "propagateUsername" && (i.input as { userId?: string }).userId === "bob",
    );
    expect(propagations).toEqual([]);
    expect((await app.call("GET", `/posts/${post.id}`)).body.userUsername).toBe("bob");
    expect((await app.call("GET", `/posts/${post.id}/comments`)).body.items[0].userUsername).toBe("bob");

    const repaired = await app.call("PUT", "/users/bob", { as: "bob", body: { username: "bob-again" } });
    expect(repaired.status).toBe(200);
    expect((await app.call("GET", "/users/bob")).body).toEqual({ id: "bob", username: "bob-again" });
    await within(20_000, async () => (await app.call("GET", `/posts/${post.id}`)).body.userUsername === "bob-again");
  });

  it("a claim with a wrong owner, or a profile with a date no one can parse, is set aside and starts nothing", async () => {
    await app.system.store.users.items.create({ id: "username:forty-two", userId: "username:forty-two", type: "username", ownerId: 42, username: "forty-two" });
    const { resource: alice } = await app.system.store.users.item("alice", "alice").read();
    await app.system.store.users.item("alice", "alice").replace({ ...alice, usernameChangedDate: "yesterday" });
    await within(10_000, async () => (await deadLetterOf("username:forty-two")) !== undefined && (await deadLetterOf("alice")) !== undefined);
    const instances = await app.system.durable.queryInstances();
    expect(instances.filter((i) => i.instanceId.includes("NaN") || i.instanceId.includes("claims-42"))).toEqual([]);
    // A later good change of alice's still starts her propagation.
    expect((await app.call("PUT", "/users/alice", { as: "alice", body: { username: "alice-2" } })).status).toBe(200);
  });
});

describe("an orchestration that can never succeed", () => {
  it("ends as Failed with its reason, instead of retrying for good", async () => {
    await app.system.durable.startNew("propagateUsername", { instanceId: "username-bad-id", input: { userId: "not/an/id", policy: { activityAttempts: 1 } } });
    const status = await within(10_000, async () => {
      const now = await app.system.durable.getStatus("username-bad-id");
      return now?.runtimeStatus === "Failed" ? now : undefined;
    });
    expect(String(status.value.output)).toMatch(/not\/an\/id/);
  });
});

describe("a damaged orchestration file in the data directory", () => {
  it("is named, set aside and reported, and the host starts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "durable-damaged-"));
    const first = await localSystem({ dataDir });
    await first.call("POST", "/users", { as: "carol", body: { username: "carol" } });
    await first.call("PUT", "/users/carol", { as: "carol", body: { username: "carol-2" } });
    await within(10_000, async () => readdirSync(join(dataDir, "durable")).some((name) => name.endsWith(".json")));
    await first.stop();
    const [victim] = readdirSync(join(dataDir, "durable")).filter((name) => name.endsWith(".json"));
    const path = join(dataDir, "durable", victim);
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.slice(0, text.length - 40));

    const second = await localSystem({ dataDir });
    try {
      expect((await second.call("GET", "/users/carol")).body.username).toBe("carol-2");
      expect(second.logs.some((line) => line.includes(victim) && /damaged/.test(line))).toBe(true);
      expect(readdirSync(join(dataDir, "durable")).some((name) => name.startsWith(victim) && name.includes(".damaged"))).toBe(true);
    } finally {
      await second.stop();
    }
  });
});
