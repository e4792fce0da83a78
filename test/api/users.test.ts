import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiFixture, type ApiFixture } from "../support/api";

let api: ApiFixture;
beforeAll(async () => (api = await apiFixture()));
afterAll(() => api.stop());

describe("users (C1, Q1)", () => {
  it("creates the caller's profile: 201 with id, username, ETag and Location", async () => {
    const response = await api.request("POST", "/api/users", { as: "alice", body: { username: "Alice" } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: "alice", username: "Alice" });
    expect(response.headers.etag).toMatch(/^".+"$/);
    expect(response.headers.location).toBe("/api/users/alice");
    expect(response.headers["content-type"]).toBe("application/json");
  });

  it("refuses a second profile for the same user and a username taken in any case", async () => {
    await api.user("bob", "bob");
    const again = await api.request("POST", "/api/users", { as: "bob", body: { username: "bobby" } });
    expect(again.status).toBe(409);
    expect(again.headers["content-type"]).toBe("application/problem+json");
    expect(again.body).toMatchObject({ type: expect.any(String), title: "Conflict", status: 409, detail: expect.stringContaining("profile") });
    const taken = await api.request("POST", "/api/users", { as: "carol", body: { username: "BOB" } });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain("taken");
  });

  it("lets exactly one of two concurrent creates of one username win", async () => {
    const [first, second] = await Promise.all([
      api.request("POST", "/api/users", { as: "racer1", body: { username: "photo-finish" } }),
      api.request("POST", "/api/users", { as: "racer2", body: { username: "Photo-Finish" } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 409]);
    const loser = first.status === 409 ? "racer1" : "racer2";
    expect((await api.request("GET", `/api/users/${loser}`)).status).toBe(404);
  });

  it("reads a profile with an ETag, answers If-None-Match with 304, and 404 for a missing user", async () => {
    await api.user("dave");
    const response = await api.request("GET", "/api/users/dave");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: "dave", username: "dave" });
    const cached = await api.request("GET", "/api/users/dave", { headers: { "if-none-match": response.headers.etag } });
    expect(cached.status).toBe(304);
    expect((await api.request("GET", "/api/users/nobody")).status).toBe(404);
    expect((await api.request("GET", "/api/users/bad%20id")).status).toBe(400);
  });

  it("renames only for the user themself, frees the old name and honours If-Match", async () => {
    await api.user("erin", "erin");
    expect((await api.request("PUT", "/api/users/erin", { as: "mallory", body: { username: "hacked" } })).status).toBe(403);

    const before = await api.request("GET", "/api/users/erin");
    const stale = await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin2" }, headers: { "if-match": '"stale"' } });
    expect(stale.status).toBe(412);

    const renamed = await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin2" }, headers: { "if-match": before.headers.etag } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id: "erin", username: "erin2" });
    expect(renamed.headers.etag).not.toBe(before.headers.etag);
    expect((await api.request("GET", "/api/users/erin")).body.username).toBe("erin2");

    // The old name is free again; the new one is taken.
    expect((await api.request("POST", "/api/users", { as: "frank", body: { username: "ERIN" } })).status).toBe(201);
    expect((await api.request("POST", "/api/users", { as: "grace", body: { username: "erin2" } })).status).toBe(409);
    expect((await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin" } })).status).toBe(409);
  });

  it("allows changing only the case of one's own username", async () => {
    await api.user("heidi", "heidi");
    const response = await api.request("PUT", "/api/users/heidi", { as: "heidi", body: { username: "Heidi" } });
    expect(response.status).toBe(200);
    expect(response.body.username).toBe("Heidi");
    expect((await api.request("POST", "/api/users", { as: "ivan", body: { username: "HEIDI" } })).status).toBe(409);
  });

  it("returns 404 when renaming a profile that does not exist", async () => {
    expect((await api.request("PUT", "/api/users/ghost", { as: "ghost", body: { username: "ghost" } })).status).toBe(404);
  });

  it.each([
    [{ username: "ab" }, "username"],
    [{ username: "a".repeat(33) }, "username"],
    [{ username: "with space" }, "username"],
    [{ username: 42 }, "username"],
    [{}, "username"],
    [{ username: "okay", admin: true }, "admin"],
  ])("rejects %j with 400 naming %s", async (body, field) => {
    const response = await api.request("POST", "/api/users", { as: "validation", body });
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain(field === "admin" ? "Unrecognized key" : field);
  });

  it("requires a valid bearer token to write", async () => {
    const none = await api.request("POST", "/api/users", { body: { username: "anon" } });
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    expect((await api.request("POST", "/api/users", { authorization: "Bearer not-a-jwt", body: { username: "anon" } })).status).toBe(401);
    expect((await api.request("POST", "/api/users", { authorization: "Basic dXNlcjpwYXNz", body: { username: "anon" } })).status).toBe(401);
  });
});
