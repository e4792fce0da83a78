import { devToken, localDevSecret } from "../local/dev-auth";
import { LIMITS } from "../src/model/limits";
import { commandLine, defineCommand, refuse } from "../local/command-line";

const COMMAND = defineCommand({
  name: "npm run token",
  summary: "Prints a development bearer token (HS256, AUTH_DEV_SECRET or the local default) for one user id.",
  positionals: "<userId>",
  flags: {},
  examples: ["npm run token -- alice", "TOKEN=$(npm run --silent token -- alice)"],
});

/** `npm run token -- <userId>`: prints a development bearer token for that user. */
async function main(): Promise<void> {
  const { positionals } = commandLine(COMMAND);
  const [userId, ...extra] = positionals;
  if (!userId || extra.length > 0) refuse(COMMAND, "give exactly one user id");
  if (!LIMITS.idPattern.test(userId)) refuse(COMMAND, `'${userId}' is no user id: 1-128 of A-Z a-z 0-9 _ . @ | -`);
  const secret = localDevSecret();
  if (!process.env.AUTH_DEV_SECRET?.trim()) console.error("(AUTH_DEV_SECRET is not set: signing with the local default that `npm start` accepts)");
  console.log(await devToken(userId, secret));
}

void main();
