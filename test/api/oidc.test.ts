import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from "jose";
import { apiFixture, type ApiFixture } from "../support/api";

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
  const jwt = new SignJWT({}).setProtectedHeader({ alg: "RS256", kid: "k1" }).setIssuer(claims.iss ?? issuer).setAudience(claims.aud ?? "api://blog").setExpirationTime(claims.expSeconds ?? "1h");
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
    for (const claims of [{ sub: "u1", aud: "api://other" }, { sub: "u1", iss: "https://evil.example" }, { sub: "u1", expSeconds: Math.floor(Date.now() / 1000) - 10 }, {}]) {
      const response = await api.request("POST", "/api/users", { authorization: `Bearer ${await token(claims)}`, body: { username: "nope" } });
      expect(response.status, JSON.stringify(claims)).toBe(401);
    }
  });

  it("rejects HS256 tokens when no AUTH_DEV_SECRET is configured", async () => {
    const hs = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u2").setExpirationTime("1h").sign(new TextEncoder().encode("x".repeat(32)));
    expect((await api.request("POST", "/api/users", { authorization: `Bearer ${hs}`, body: { username: "hs" } })).status).toBe(401);
  });
});
