import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCosmos } from "embedded-cosmos";
import { localSystem, within, type Client } from "../support/system";

/**
 * What the local host exposes, and to whom: a hostile request is a 4xx and the host keeps
 * serving; dev sign-in answers only loopback callers of its own origin; the host answers only
 * loopback host names (DNS rebinding) unless told otherwise.
 */
let app: Client;
let site: string;
let port: number;

/** One raw HTTP/1.1 exchange: what a socket sent back (status line and all). */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

function webFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "web-"));
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Blog</title>");
  writeFileSync(join(dir, "app.js"), "console.log('app')\n//# sourceMappingURL=app.js.map");
  mkdirSync(join(dir, "chunks"));
  return dir;
}

beforeAll(async () => {
  app = await localSystem({ webDir: webFolder(), corsAllowedOrigins: ["*"] });
  site = app.system.url.replace(/\/api$/, "");
  port = Number(new URL(site).port);
});
afterAll(() => app.stop());

describe("a hostile request to the local host", () => {
  it("with a Host that is no authority, or a request target that is no URL, is a 400 and the host keeps serving", async () => {
    for (const request of [
      "GET /api/feed HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n",
      "GET /api/feed HTTP/1.1\r\nHost: localhost:99999\r\nConnection: close\r\n\r\n",
      "GET http://[::1/api/feed HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n",
      "OPTIONS /local/dev-token HTTP/1.1\r\nHost: a b\r\nOrigin: http://x\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n",
      "POST /local/dev-token HTTP/1.1\r\nHost: a b\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    ]) {
      expect(statusOf(await raw(request)), request).toBe(400);
    }
    expect((await fetch(`${site}/api/feed`)).status).toBe(200);
  });

  it("that the client aborts mid-body is a quiet line, not an unhandled error, and the host keeps serving", async () => {
    const token = (await (await fetch(`${site}/local/dev-token`, { method: "POST", body: JSON.stringify({ userId: "aborter" }) })).json()) as { token: string };
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `POST /api/posts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`,
          () => socket.destroy(),
        );
      });
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
    await within(5_000, async () => app.logs.some((line) => /closed the connection before its request was complete/.test(line)));
    expect(app.logs.join("\n")).not.toMatch(/unhandled error/);
    expect((await fetch(`${site}/api/feed`)).status).toBe(200);
  });

  it("for a host name that is not loopback (DNS rebinding) is refused, on the API and the web alike", async () => {
    for (const path of ["/api/feed", "/", "/config.json"]) {
      expect(statusOf(await raw(`GET ${path} HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n`)), path).toBe(403);
    }
    for (const host of ["localhost", `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `blog.localhost:${port}`]) {
      expect(statusOf(await raw(`GET /api/feed HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)), host).toBe(200);
    }
  });
});

describe("the host's log", () => {
  it("gives each API request's Cosmos DB calls and charge, as the route's own wrapper measured them", async () => {
    await fetch(`${site}/api/users/nobody`);
    const line = await within(5_000, async () => app.logs.find((entry) => entry.includes("GET /api/users/nobody")));
    expect(line.value).toMatch(/404 .* 1 Cosmos DB request · \d+\.\d\d RU/);
  });
});

describe("dev sign-in", () => {
  it("has no CORS, even with CORS_ALLOWED_ORIGINS '*', and refuses a page of another origin", async () => {
    const preflight = await fetch(`${site}/local/dev-token`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const minted = await fetch(`${site}/local/dev-token`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
      body: JSON.stringify({ userId: "alice" }),
    });
    expect(minted.status).toBe(403);
    expect(minted.headers.get("access-control-allow-origin")).toBeNull();
    // The API itself keeps the CORS it is configured with.
    expect((await fetch(`${site}/api/feed`, { headers: { origin: "https://evil.example" } })).headers.get("access-control-allow-origin")).toBe("*");
    // The app's own page may sign in.
    const own = await fetch(`${site}/local/dev-token`, { method: "POST", headers: { origin: site }, body: JSON.stringify({ userId: "alice" }) });
    expect(own.status).toBe(200);
  });

  it("answers only a loopback Host, whatever other host names the host is allowed to answer", async () => {
    const open = await localSystem({ webDir: webFolder(), allowedHosts: ["*"] });
    try {
      const openPort = new URL(open.system.url).port;
      const ask = (host: string, path: string) =>
        new Promise<number>((resolve, reject) => {
          const body = path === "/api/feed" ? "" : JSON.stringify({ userId: "alice" });
          const socket = connect(Number(openPort), "127.0.0.1", () =>
            socket.write(`${body ? "POST" : "GET"} ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`),
          );
          let answer = "";
          socket.on("data", (chunk) => (answer += chunk.toString()));
          socket.on("end", () => resolve(statusOf(answer)));
          socket.on("error", reject);
        });
      expect(await ask("blog.example", "/api/feed")).toBe(200);
      expect(await ask("blog.example", "/local/dev-token")).toBe(403);
      expect(await ask(`localhost:${openPort}`, "/local/dev-token")).toBe(200);
    } finally {
      await open.stop();
    }
  });

  it("is off against a real account unless LOCAL_DEV_SIGN_IN turns it on", async () => {
    const account = await startCosmos();
    try {
      for (const [devSignIn, expected] of [
        [undefined, 404],
        [true, 200],
      ] as const) {
        const other = await localSystem({
          webDir: webFolder(),
          cosmos: { endpoint: account.endpoint, key: account.key },
          auth: { devSecret: "x".repeat(40) },
          devSignIn,
        });
        try {
          const url = other.system.url.replace(/\/api$/, "/local/dev-token");
          expect((await fetch(url, { method: "POST", body: JSON.stringify({ userId: "alice" }) })).status).toBe(expected);
        } finally {
          await other.stop();
        }
      }
    } finally {
      await account.stop();
    }
  });
});

describe("the web front end's hardening", () => {
  it("sends a Content-Security-Policy that forbids framing, and nosniff", async () => {
    const index = await fetch(`${site}/`);
    const policy = index.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("default-src 'self'");
    expect(policy).toMatch(/connect-src 'self'/);
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(index.headers.get("x-frame-options")).toBe("DENY");
  });

  it("serves source maps only when npm start is asked to (--source-maps)", async () => {
    const maps = mkdtempSync(join(tmpdir(), "maps-"));
    writeFileSync(join(maps, "app.js.map"), '{"version":3,"sources":[],"mappings":""}');
    // The default host has none to serve; dist/web holds none to leak.
    expect((await fetch(`${site}/app.js.map`)).status).toBe(404);
    const debug = await localSystem({ webDir: webFolder(), sourceMapsDir: maps });
    try {
      const served = await fetch(debug.system.url.replace(/\/api$/, "/app.js.map"));
      expect(served.status).toBe(200);
      expect(await served.json()).toMatchObject({ version: 3 });
    } finally {
      await debug.stop();
    }
  });
});

describe("the local host's log", () => {
  it("without request lines (LOG_REQUESTS=false) still reports what the host says about itself", async () => {
    const quiet = await localSystem({ logRequests: false });
    try {
      expect((await quiet.call("GET", "/feed")).status).toBe(200);
      expect(quiet.logs.some((line) => /^GET \/api\/feed 200/.test(line))).toBe(false);
      expect(quiet.logs.some((line) => /container posts .* ready/.test(line))).toBe(true);
    } finally {
      await quiet.stop();
    }
    expect(app.logs.some((line) => /^GET \/api\/feed 200/.test(line))).toBe(true);
  });
});
