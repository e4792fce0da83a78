import { devToken, localDevSecret } from "../local/dev-auth";
import { LIMITS } from "../src/model/limits";

/** `npm run token -- <userId>`: prints a development bearer token for that user. */
async function main(): Promise<void> {
  const userId = process.argv[2];
  if (!userId || !LIMITS.idPattern.test(userId)) {
    console.error("usage: npm run token -- <userId>   (1-128 of A-Z a-z 0-9 _ . @ | -)");
    process.exit(2);
  }
  const secret = localDevSecret();
  if (!process.env.AUTH_DEV_SECRET?.trim()) console.error("(AUTH_DEV_SECRET is not set: signing with the local default that `npm start` accepts)");
  console.log(await devToken(userId, secret));
}

void main();
