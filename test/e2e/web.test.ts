import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { localSystem, type Client } from "../support/system";

/**
 * The local host serves the built front end at `/` as Static Web Apps does in Azure, plus
 * config.json and dev sign-in. (The last tests start systems of their own, which take over
 * the process-wide store: they come after every test of the first system's API.)
 */
let app: Client;
let site: string;
let webDir: string;

beforeAll(async () => {
  webDir = mkdtempSync(join(tmpdir(), "web-"));
  writeFileSync(join(webDir, "index.html"), "<!doctype html><title>Blog</title>");
  writeFileSync(join(webDir, "app.js"), "console.log('app')");
  mkdirSync(join(webDir, "chunks"));
  writeFileSync(join(webDir, "chunks/msal-ABC.js"), "export {}");
  app = await localSystem({ webDir });
  site = app.system.url.replace(/\/api$/, "");
});
afterAll(() => app.stop());

describe("the web front end on the local host", () => {
  it("serves the files with their types, index.html at /, hashed chunks cacheable", async () => {
    const index = await fetch(`${site}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(await index.text()).toContain("<title>Blog</title>");
    const script = await fetch(`${site}/app.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${site}/chunks/msal-ABC.js`)).headers.get("cache-control")).toContain("immutable");
  });

  it("tells the app where the API is and that sign-in is by dev token", async () => {
    expect(await (await fetch(`${site}/config.json`)).json()).toEqual({ apiBase: "/api", auth: { mode: "dev" } });
  });

  it("signs dev tokens for the 'sign in as' box, and refuses a bad user id", async () => {
    const response = await fetch(`${site}/local/dev-token`, { method: "POST", body: JSON.stringify({ userId: "alice" }) });
    const { token } = (await response.json()) as { token: string };
    const { payload } = await jwtVerify(token, new TextEncoder().encode(LOCAL_DEV_SECRET));
    expect(payload.sub).toBe("alice");
    for (const body of ['{"userId":"../x"}', '{"userId":""}', "not json", '{"userId":42}']) {
      expect((await fetch(`${site}/local/dev-token`, { method: "POST", body })).status).toBe(400);
    }
  });

  it("serves nothing outside its folder, and leaves /api to the API", async () => {
    for (const path of ["/../package.json", "/%2e%2e/%2e%2e/package.json", "/chunks/../../etc/passwd", "/secret.txt", "/%E0%A4%A.js", "/%ZZ"]) {
      expect((await fetch(`${site}${path}`)).status, path).toBe(404);
    }
    expect((await fetch(`${site}/api/feed`)).status).toBe(200);
  });

  it("has no dev sign-in when dev tokens are off", async () => {
    const strict = await localSystem({ webDir, auth: { issuer: "https://issuer.example/v2.0", audience: "api://blog" } });
    try {
      const response = await fetch(strict.system.url.replace(/\/api$/, "/local/dev-token"), { method: "POST", body: '{"userId":"alice"}' });
      expect(response.status).toBe(404);
      expect(await response.text()).toMatch(/AUTH_DEV_SECRET/);
    } finally {
      await strict.stop();
    }
  });

  it("says how to build the front end when it is not built", async () => {
    const bare = await localSystem({ webDir: join(webDir, "missing") });
    try {
      const response = await fetch(bare.system.url.replace(/\/api$/, "/"));
      expect(response.status).toBe(404);
      expect(await response.text()).toMatch(/npm run build/);
    } finally {
      await bare.stop();
    }
  });
});
