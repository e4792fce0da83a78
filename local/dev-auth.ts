import { SignJWT } from "jose";
import { LOCAL_DEV_SECRET } from "../src/config";

export { LOCAL_DEV_SECRET };

/** A development token for `userId` (claims `sub`, `iat`, `exp`), as `npm run token` prints. */
export function devToken(userId: string, secret: string, expiresIn = "12h"): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}

/** The dev secret in effect locally: AUTH_DEV_SECRET when set (and not empty), else the local default. */
export function localDevSecret(env: NodeJS.ProcessEnv = process.env): string {
  return env.AUTH_DEV_SECRET?.trim() || LOCAL_DEV_SECRET;
}
