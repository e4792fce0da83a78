import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from "jose";
import { apiFixture, type ApiFixture } from "../support/api";
import { loadIssuerSettings } from "../../src/config";

/** A local OpenID provider: discovery document and JWKS on loopback, as Entra ID would serve them. */
let provider: Server;
let issuer: string;
let signingKey: KeyLike;
let api: ApiFixture;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  signingKey = privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  provider = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/.well-known/openid-configuration") res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/keys` }));
    else if (req.url === "/keys") res.end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end("{}");
  });
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  const address = provider.address() as { port: number };
  issuer = `http://127.0.0.1:${address.port}`;
  // No dev secret: only tokens of the configured issuer and audience are accepted.
  api = await apiFixture({ settings: { auth: { issuer, audience: "api://blog" } } });
});
afterAll(async () => {
  await api.stop();
  provider.close();
});

const token = (claims: { sub?: string; iss?: string; aud?: string; expSeconds?: number }) => {
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(claims.iss ?? issuer)
    .setAudience(claims.aud ?? "api://blog")
    .setIssuedAt()
    .setExpirationTime(claims.expSeconds ?? "1h");
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  return jwt.sign(signingKey);
};

describe("OIDC bearer tokens (production path)", () => {
  it("accepts a token of the configured issuer and audience, discovering its keys", async () => {
    const response = await api.request("POST", "/api/users", { authorization: `Bearer ${await token({ sub: "oidc-user" })}`, body: { username: "oidc" } });
    expect(response.status).toBe(201);
    expect(response.body.id).toBe("oidc-user");
  });

  it("rejects another audience, another issuer, an expired token and a missing subject", async () => {
    for (const claims of [
      { sub: "u1", aud: "api://other" },
      { sub: "u1", iss: "https://evil.example" },
      { sub: "u1", expSeconds: Math.floor(Date.now() / 1000) - 600 },
      {},
    ]) {
      const response = await api.request("POST", "/api/users", { authorization: `Bearer ${await token(claims)}`, body: { username: "nope" } });
      expect(response.status, JSON.stringify(claims)).toBe(401);
    }
  });

  it("rejects HS256 tokens when no AUTH_DEV_SECRET is configured", async () => {
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("u2")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("x".repeat(32)));
    expect((await api.request("POST", "/api/users", { authorization: `Bearer ${hs}`, body: { username: "hs" } })).status).toBe(401);
  });
});

describe("Entra ID access tokens, v1 and v2, as Entra shapes them", () => {
  const tenant = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635";
  const clientId = "6e74172b-be56-4843-9ff4-e66a39bb12e3";
  let entra: ApiFixture;
  let keys: Server;
  let key: KeyLike;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    key = privateKey;
    const jwk = { ...(await exportJWK(publicKey)), kid: "entra-1", alg: "RS256", use: "sig" };
    keys = createServer((_req, res) => res.setHeader("content-type", "application/json").end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => keys.listen(0, "127.0.0.1", resolve));
    const jwksUri = `http://127.0.0.1:${(keys.address() as { port: number }).port}/discovery/v2.0/keys`;
    // As the README says to configure it: the v2 issuer, the App ID URI, the bare scope.
    entra = await apiFixture({
      settings: {
        auth: {
          issuer: `https://login.microsoftonline.com/${tenant}/v2.0`,
          audience: `api://${clientId}`,
          jwksUri,
          scope: "access_as_user",
          appRoles: ["Blog.Write"],
        },
      },
    });
  });
  afterAll(async () => {
    await entra.stop();
    keys.close();
  });

  const sign = (claims: Record<string, unknown>) =>
    new SignJWT({ tid: tenant, oid: "c3f1e5d2-0000-4000-8000-000000000001", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "entra-1", typ: "JWT" })
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(key);
  /** A v2.0 access token: the v2 issuer, `aud` the API's client ID (a GUID). */
  const v2 = (claims: Record<string, unknown> = {}) =>
    sign({
      ver: "2.0",
      iss: `https://login.microsoftonline.com/${tenant}/v2.0`,
      aud: clientId,
      azp: "web-client",
      scp: "access_as_user",
      sub: "v2-user",
      ...claims,
    });
  /** A v1.0 access token: the tenant's sts.windows.net issuer, `aud` the App ID URI. */
  const v1 = (claims: Record<string, unknown> = {}) =>
    sign({
      ver: "1.0",
      iss: `https://sts.windows.net/${tenant}/`,
      aud: `api://${clientId}`,
      appid: "web-client",
      scp: "access_as_user",
      sub: "v1-user",
      ...claims,
    });
  const create = async (token: string, username: string) =>
    (await entra.request("POST", "/api/users", { authorization: `Bearer ${token}`, body: { username } })).status;

  it("accepts a v2 token whose audience is the client ID, and a v1 token from the tenant's v1 issuer", async () => {
    expect(await create(await v2(), "entra-v2")).toBe(201);
    expect(await create(await v1(), "entra-v1")).toBe(201);
  });

  it("requires the API's scope in scp, or an app role it names in roles", async () => {
    expect(await create(await v2({ sub: "no-scope", scp: undefined }), "no-scope")).toBe(401);
    expect(await create(await v2({ sub: "other-scope", scp: "User.Read openid" }), "other-scope")).toBe(401);
    expect(await create(await v2({ sub: "two-scopes", scp: "openid access_as_user" }), "two-scopes")).toBe(201);
    expect(await create(await v2({ sub: "app-with-role", scp: undefined, roles: ["Blog.Write"] }), "app-role")).toBe(201);
    expect(await create(await v2({ sub: "app-other-role", scp: undefined, roles: ["Other"] }), "app-other")).toBe(401);
    // Other OpenID Connect providers' JWT access tokens name the scopes `scope` (RFC 9068).
    expect(await create(await v2({ sub: "rfc9068", scp: undefined, scope: "openid access_as_user" }), "rfc9068")).toBe(201);
    expect(await create(await v2({ sub: "rfc9068-other", scp: undefined, scope: "openid" }), "rfc9068-o")).toBe(401);
  });

  it("refuses another tenant's issuer and another API's audience", async () => {
    expect(await create(await v1({ sub: "wrong-tenant", iss: "https://sts.windows.net/00000000-0000-0000-0000-000000000000/" }), "wrong-tenant")).toBe(401);
    expect(await create(await v2({ sub: "wrong-aud", aud: "11111111-2222-3333-4444-555555555555" }), "wrong-aud")).toBe(401);
  });
});

describe("npm start with an OIDC issuer and the embedded server", () => {
  it("accepts the issuer's tokens beside dev tokens, and serves the front end's Entra sign-in settings", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "local-1", alg: "RS256", use: "sig" };
    const jwks = createServer((_req, res) => res.setHeader("content-type", "application/json").end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const tenant = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635";
    const child = spawn(process.execPath, [join(__dirname, "../../dist/local/start.js"), "--in-memory"], {
      env: {
        ...process.env,
        PORT: "0",
        EMBEDDED_COSMOS_PORT: "0",
        LOG_REQUESTS: "false",
        AUTH_DEV_SECRET: "",
        AUTH_ISSUER: `https://login.microsoftonline.com/${tenant}/v2.0`,
        AUTH_AUDIENCE: "api://6e74172b-be56-4843-9ff4-e66a39bb12e3",
        AUTH_JWKS_URI: `http://127.0.0.1:${(jwks.address() as { port: number }).port}/keys`,
        AUTH_SCOPE: "access_as_user",
        WEB_AUTH_CLIENT_ID: "web-client",
        WEB_AUTH_AUTHORITY: `https://login.microsoftonline.com/${tenant}`,
        WEB_API_SCOPE: "api://6e74172b-be56-4843-9ff4-e66a39bb12e3/access_as_user",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = "";
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const ready = /Blog API ready on (\S+)/.exec(output);
          if (ready) resolve(ready[1]);
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.once("exit", (code) => reject(new Error(`npm start exited with ${code}: ${output}`)));
      });
      const token = await new SignJWT({ ver: "2.0", scp: "access_as_user", tid: tenant })
        .setProtectedHeader({ alg: "RS256", kid: "local-1" })
        .setIssuer(`https://login.microsoftonline.com/${tenant}/v2.0`)
        .setAudience("6e74172b-be56-4843-9ff4-e66a39bb12e3")
        .setSubject("entra-local")
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(privateKey);
      const created = await fetch(`${url}/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ username: "entra-local" }),
      });
      expect(created.status).toBe(201);
      const dev = await fetch(`${url}/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${await devToken("dev-local", LOCAL_DEV_SECRET)}`, "content-type": "application/json" },
        body: JSON.stringify({ username: "dev-local" }),
      });
      expect(dev.status).toBe(201);
      const site = url.replace(/\/api$/, "");
      expect(await (await fetch(`${site}/config.json`)).json()).toMatchObject({
        auth: { mode: "entra", clientId: "web-client", authority: `https://login.microsoftonline.com/${tenant}` },
      });
      expect((await fetch(`${site}/config.json`)).headers.get("content-security-policy")).toContain("connect-src 'self' https://login.microsoftonline.com");
    } finally {
      child.kill("SIGKILL");
      jwks.close();
    }
  }, 60_000);
});

describe("an issuer set in the environment, with no AUTH_SCOPE", () => {
  it("refuses an ID token (no scope) as an access token, and accepts one with the default scope", async () => {
    const settings = loadIssuerSettings({ AUTH_ISSUER: issuer, AUTH_AUDIENCE: "api://blog" });
    const fromEnvironment = await apiFixture({ settings: { auth: settings } });
    try {
      const idToken = await token({ sub: "id-token" });
      expect((await fromEnvironment.request("POST", "/api/users", { authorization: `Bearer ${idToken}`, body: { username: "idtoken" } })).status).toBe(401);
      const access = await new SignJWT({ scp: "access_as_user" })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(issuer)
        .setAudience("api://blog")
        .setSubject("access-token")
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(signingKey);
      expect((await fromEnvironment.request("POST", "/api/users", { authorization: `Bearer ${access}`, body: { username: "access" } })).status).toBe(201);
    } finally {
      await fromEnvironment.stop();
    }
  });
});

describe("issuer trouble is the issuer's, not the token's: 503 with Retry-After, bounded in time and size", () => {
  let trouble: Server;
  let base: string;
  const hanging: import("node:http").ServerResponse[] = [];
  beforeAll(async () => {
    trouble = createServer((req, res) => {
      const [, scenario, rest] = /^\/([^/]+)(\/.*)$/.exec(req.url ?? "") ?? [];
      const discovery = rest === "/.well-known/openid-configuration";
      const hang = () => hanging.push(res);
      const huge = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"keys": [');
        const chunk = `${JSON.stringify({ kty: "oct", k: "x".repeat(60_000) })},`;
        let sent = 0;
        const more = () => {
          // Far more than any real document; the reader stops long before the end.
          while (sent < 400 && res.write(chunk)) sent++;
          if (sent < 400) res.once("drain", more);
          else res.end("{}]}");
        };
        more();
      };
      if (scenario === "hang") return hang();
      if (scenario === "huge" && discovery) return huge();
      if (scenario === "error") return res.writeHead(500).end("{}");
      if (scenario === "no-jwks" && discovery) return res.end("{}");
      if (discovery) return res.end(JSON.stringify({ issuer: `${base}/${scenario}`, jwks_uri: `${base}/${scenario}/keys` }));
      if (scenario === "keys-hang") return hang();
      if (scenario === "keys-huge") return huge();
      res.writeHead(404).end("{}");
    });
    await new Promise<void>((resolve) => trouble.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(trouble.address() as { port: number }).port}`;
  });
  afterAll(() => {
    for (const res of hanging) res.destroy();
    trouble.close();
  });

  const rs256 = (iss: string) =>
    new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(iss)
      .setAudience("api://blog")
      .setSubject("u")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(signingKey);

  it("answers 503 with Retry-After for every kind of trouble, through the API", async () => {
    for (const scenario of ["hang", "huge", "error", "no-jwks", "keys-hang", "keys-huge"]) {
      const troubled = await apiFixture({ settings: { auth: { issuer: `${base}/${scenario}`, audience: "api://blog" } } });
      try {
        const response = await troubled.request("POST", "/api/users", {
          authorization: `Bearer ${await rs256(`${base}/${scenario}`)}`,
          body: { username: "late" },
        });
        expect(response.status, scenario).toBe(503);
        expect(response.headers["retry-after"], scenario).toBe("5");
        expect(response.headers["www-authenticate"], scenario).toBeUndefined();
      } finally {
        await troubled.stop();
      }
    }
  });
});
