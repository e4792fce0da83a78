import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import type { Settings } from "../config";
import { unauthorized } from "../model/errors";
import { LIMITS } from "../model/limits";

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, Promise<RemoteKeys>>();

/** The issuer's signing keys: AUTH_JWKS_URI, or discovered from its OpenID configuration (cached). */
function issuerKeys(auth: Settings["auth"]): Promise<RemoteKeys> {
  const key = auth.jwksUri ?? auth.issuer ?? "";
  let keys = keySets.get(key);
  if (!keys) {
    keys = (async () => {
      if (auth.jwksUri) return createRemoteJWKSet(new URL(auth.jwksUri));
      const discovery = await fetch(new URL(".well-known/openid-configuration", auth.issuer!.endsWith("/") ? auth.issuer : `${auth.issuer}/`));
      if (!discovery.ok) throw new Error(`OpenID discovery for ${auth.issuer} failed with ${discovery.status}`);
      const { jwks_uri } = (await discovery.json()) as { jwks_uri: string };
      return createRemoteJWKSet(new URL(jwks_uri));
    })();
    keys.catch(() => keySets.delete(key));
    keySets.set(key, keys);
  }
  return keys;
}

async function verify(token: string, auth: Settings["auth"]): Promise<JWTPayload> {
  let algorithm: string | undefined;
  try {
    algorithm = decodeProtectedHeader(token).alg;
  } catch {
    throw unauthorized("The bearer token is not a JWT.");
  }
  try {
    // Development tokens: HS256 signed with AUTH_DEV_SECRET, only when that setting exists.
    if (algorithm === "HS256" && auth.devSecret) {
      const { payload } = await jwtVerify(token, new TextEncoder().encode(auth.devSecret), { algorithms: ["HS256"], requiredClaims: ["sub", "exp"] });
      return payload;
    }
    if (auth.issuer && auth.audience && algorithm !== "HS256") {
      const { payload } = await jwtVerify(token, await issuerKeys(auth), { issuer: auth.issuer, audience: auth.audience, requiredClaims: ["sub", "exp"] });
      return payload;
    }
  } catch (error) {
    throw unauthorized(`The bearer token was rejected: ${(error as Error).message}`);
  }
  throw unauthorized("No configured issuer accepts this token.");
}

/** The caller's user id: the `sub` of a valid bearer token. */
export async function authenticate(authorization: string | null, auth: Settings["auth"]): Promise<string> {
  const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization.trim()) : null;
  if (!match) throw unauthorized("Send 'Authorization: Bearer <token>'.");
  const payload = await verify(match[1], auth);
  if (typeof payload.sub !== "string" || !LIMITS.idPattern.test(payload.sub)) {
    throw unauthorized("The token's subject is not a usable user id.");
  }
  return payload.sub;
}
