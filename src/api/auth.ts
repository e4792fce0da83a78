import { createSecretKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import type { AuthSettings } from "../config";
import { unauthenticated, unauthorized } from "../model/errors";
import { LIMITS } from "../model/limits";

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, Promise<RemoteKeys>>();

/** The issuer's signing keys: AUTH_JWKS_URI, or discovered from its OpenID configuration (cached). */
function issuerKeys(auth: AuthSettings): Promise<RemoteKeys> {
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

/**
 * Time rules for every token, dev tokens as Entra's: five minutes of clock skew (what Entra ID's
 * own libraries allow), issued in the past (an `iat` ahead of the clock is refused), and at most a
 * day old.
 */
const MAX_LIFETIME_SECONDS = 24 * 60 * 60;
const LIFETIME = { clockTolerance: 300, maxTokenAge: MAX_LIFETIME_SECONDS } as const;

/** A token that claims to stay valid for more than a day (`exp` of 1e300) is refused, even while young. */
function boundedLifetime(payload: JWTPayload): JWTPayload {
  if (payload.exp! - payload.iat! > MAX_LIFETIME_SECONDS) throw unauthorized("The bearer token was rejected: its lifetime is longer than 24 hours.");
  return payload;
}

/** The dev secret as a key, made once: from raw bytes, jose imports the key through WebCrypto on every token it checks. */
const devKeys = new Map<string, KeyObject>();
function devKey(secret: string): KeyObject {
  let key = devKeys.get(secret);
  if (!key) devKeys.set(secret, (key = createSecretKey(Buffer.from(secret, "utf8"))));
  return key;
}

async function verify(token: string, auth: AuthSettings): Promise<JWTPayload> {
  let algorithm: string | undefined;
  try {
    algorithm = decodeProtectedHeader(token).alg;
  } catch {
    throw unauthorized("The bearer token is not a JWT.");
  }
  try {
    // Development tokens: HS256 signed with AUTH_DEV_SECRET, only when that setting exists.
    if (algorithm === "HS256" && auth.devSecret) {
      const { payload } = await jwtVerify(token, devKey(auth.devSecret), {
        algorithms: ["HS256"],
        requiredClaims: ["sub", "exp"],
        ...LIFETIME,
      });
      return boundedLifetime(payload);
    }
    if (auth.issuer && auth.audience && algorithm !== "HS256") {
      const { payload } = await jwtVerify(token, await issuerKeys(auth), {
        issuer: acceptedIssuers(auth.issuer),
        audience: acceptedAudiences(auth.audience),
        requiredClaims: ["sub", "exp"],
        ...LIFETIME,
      });
      checkPermission(payload, auth);
      return boundedLifetime(payload);
    }
  } catch (error) {
    throw unauthorized(`The bearer token was rejected: ${(error as Error).message}`);
  }
  throw unauthorized("No configured issuer accepts this token.");
}

const ENTRA_V2_ISSUER = /^https:\/\/login\.microsoftonline\.com\/([0-9a-f-]{36})\/v2\.0\/?$/i;

/**
 * The issuer, and for an Entra ID v2.0 issuer the same tenant's v1 issuer: which one a token
 * carries depends on the API registration's token version, not on the client.
 */
function acceptedIssuers(issuer: string): string[] {
  const tenant = ENTRA_V2_ISSUER.exec(issuer)?.[1];
  return tenant ? [issuer, `https://sts.windows.net/${tenant}/`] : [issuer];
}

/** The configured audiences; `api://<client id>` also admits the bare client ID, which v2.0 access tokens carry as `aud`. */
function acceptedAudiences(audience: string): string[] {
  const audiences = audience
    .split(",")
    .map((value) => value.trim())
    .filter(Boolean);
  const clientIds = audiences.flatMap((value) => /^api:\/\/([0-9a-f-]{36})$/i.exec(value)?.[1] ?? []);
  return [...new Set([...audiences, ...clientIds])];
}

/**
 * What the token may do here: a user's token carries the API's scope in `scp` (space-separated);
 * an application's token (no user) carries one of the configured app roles in `roles`. With
 * neither configured, any token of the issuer and audience is enough.
 */
function checkPermission(payload: JWTPayload, auth: AuthSettings): void {
  if (!auth.scope && !auth.appRoles?.length) return;
  // Entra ID names the scopes `scp`; JWT access tokens of other providers `scope` (RFC 9068).
  const granted = typeof payload.scp === "string" ? payload.scp : typeof payload.scope === "string" ? payload.scope : "";
  const scopes = granted.split(" ").filter(Boolean);
  const roles = Array.isArray(payload.roles) ? (payload.roles as unknown[]) : [];
  if (auth.scope && scopes.includes(auth.scope)) return;
  if (auth.appRoles?.some((role) => roles.includes(role))) return;
  throw unauthorized(`The token grants neither the scope '${auth.scope ?? "(none)"}' nor an app role this API accepts.`);
}

/** Who calls: the `sub` of a valid bearer token, and whether its `roles` hold one of the admin roles (AUTH_ADMIN_ROLES). */
export async function authenticate(authorization: string | null, auth: AuthSettings): Promise<{ userId: string; admin: boolean }> {
  if (authorization === null || authorization.trim() === "") throw unauthenticated("Send 'Authorization: Bearer <token>'.");
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!match) throw unauthorized("Send 'Authorization: Bearer <token>'.");
  const payload = await verify(match[1], auth);
  if (typeof payload.sub !== "string" || !LIMITS.idPattern.test(payload.sub)) {
    throw unauthorized("The token's subject is not a usable user id.");
  }
  const roles = Array.isArray(payload.roles) ? (payload.roles as unknown[]) : [];
  return { userId: payload.sub, admin: auth.adminRoles?.some((role) => roles.includes(role)) ?? false };
}
