import { createSecretKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, jwtVerify, type FetchImplementation, type JWTPayload } from "jose";
import type { AuthSettings } from "../config";
import { IssuerUnavailableError, unauthenticated, unauthorized } from "../model/errors";
import { LIMITS } from "../model/limits";

type RemoteKeys = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, Promise<RemoteKeys>>();

/** How long the issuer's documents may take (jose's own JWKS timeout), and how large they may be (real ones are a few KB). */
const ISSUER_TIMEOUT_MS = 5000;
const ISSUER_MAX_BYTES = 1024 * 1024;

/** The body of `response`, read up to ISSUER_MAX_BYTES. */
async function boundedText(response: Response, issuer: string): Promise<string> {
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader!.read()) {
    size += chunk.value.byteLength;
    if (size > ISSUER_MAX_BYTES) {
      await reader!.cancel();
      throw new IssuerUnavailableError(issuer, `a document larger than ${ISSUER_MAX_BYTES} bytes`);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A JSON document of the issuer's, bounded in time and size; any failure is the issuer's, never the token's. */
async function issuerDocument(url: string, issuer: string, signal?: AbortSignal): Promise<{ text: string; json: unknown }> {
  const deadline = AbortSignal.timeout(ISSUER_TIMEOUT_MS);
  try {
    const response = await fetch(url, { signal: signal ? AbortSignal.any([signal, deadline]) : deadline, redirect: "manual" });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new IssuerUnavailableError(issuer, `${url} answered ${response.status}`);
    }
    const text = await boundedText(response, issuer);
    return { text, json: JSON.parse(text) as unknown };
  } catch (error) {
    if (error instanceof IssuerUnavailableError) throw error;
    throw new IssuerUnavailableError(issuer, `${url}: ${(error as Error).message}`);
  }
}

/** The issuer's signing keys: AUTH_JWKS_URI, or discovered from its OpenID configuration (cached). */
function issuerKeys(auth: AuthSettings): Promise<RemoteKeys> {
  const issuer = auth.jwksUri ?? auth.issuer ?? "";
  let keys = keySets.get(issuer);
  if (!keys) {
    // jose fetches the keys through this, so they are bounded as the discovery document is.
    const boundedFetch: FetchImplementation = async (url, options) =>
      new Response((await issuerDocument(url, issuer, options.signal)).text, { headers: { "content-type": "application/json" } });
    keys = (async () => {
      let jwksUri = auth.jwksUri;
      if (!jwksUri) {
        const discovery = new URL(".well-known/openid-configuration", auth.issuer!.endsWith("/") ? auth.issuer : `${auth.issuer}/`);
        const { json } = await issuerDocument(discovery.href, issuer);
        const uri = (json as { jwks_uri?: unknown } | null)?.jwks_uri;
        if (typeof uri !== "string" || !URL.canParse(uri)) throw new IssuerUnavailableError(issuer, "its OpenID configuration names no jwks_uri");
        jwksUri = uri;
      }
      return createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: ISSUER_TIMEOUT_MS, [customFetch]: boundedFetch });
    })();
    keys.catch(() => keySets.delete(issuer));
    keySets.set(issuer, keys);
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
    if (error instanceof IssuerUnavailableError) throw error;
    if (error instanceof errors.JWKSTimeout) throw new IssuerUnavailableError(auth.jwksUri ?? auth.issuer ?? "", error.message);
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
