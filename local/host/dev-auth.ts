import { SignJWT } from "jose";

/**
 * The HS256 secret `npm start` uses when AUTH_DEV_SECRET is not set. It only ever exists in the
 * local host: production validates tokens of the configured OIDC issuer and has no such default.
 */
export const LOCAL_DEV_SECRET = "local-development-only-secret-not-for-azure-0001";

/** A development token for `userId` (claims `sub`, `iat`, `exp`), as `npm run token` prints. */
export function devToken(userId: string, secret: string, expiresIn = "12h"): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject(userId).setIssuedAt().setExpirationTime(expiresIn).sign(new TextEncoder().encode(secret));
}

/** The dev secret in effect locally: AUTH_DEV_SECRET when set (and not empty), else the local default. */
export function localDevSecret(env: NodeJS.ProcessEnv = process.env): string {
  return env.AUTH_DEV_SECRET?.trim() || LOCAL_DEV_SECRET;
}
