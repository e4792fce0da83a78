import { defaultToLocalAccount } from "../local/local-account";
import { commandLine, defineCommand } from "../local/command-line";
import { rebuildCopies } from "../src/pipeline/rebuild";
import { loadSettings } from "../src/config";
import { createStore } from "../src/store/client";
import { ProgressBar } from "./progress";

const COMMAND = defineCommand({
  name: "npm run rebuild-copies",
  summary:
    "Replays the posts change feed from the beginning into the short-form copies (Q3 in users, Q6 in feed), on the account of COSMOS_ENDPOINT or COSMOS__accountEndpoint; with none, npm start's embedded server (EMBEDDED_COSMOS_PORT, default 8081).",
  flags: { fresh: { type: "boolean", default: false, description: "remove every copy first, then rebuild" } },
  examples: ["npm run rebuild-copies", "npm run rebuild-copies -- --fresh"],
});

/** `npm run rebuild-copies [-- --fresh]`: replays the posts change feed into the Q3/Q6 copies. */
async function main(): Promise<void> {
  const { values } = commandLine(COMMAND);
  const local = defaultToLocalAccount();
  if (local) console.error(local);
  const store = createStore(loadSettings());
  const bar = new ProgressBar("replaying posts", 0);
  const result = await rebuildCopies(store, { fresh: values.fresh ?? false, progress: { total: (n) => bar.setTotal(n), advance: (n) => bar.tick(n) } });
  bar.finish(`rebuilt the copies from ${result.posts} posts${values.fresh ? ` (${result.cleared} old copies removed first)` : ""}`);
  store.dispose();
}

main().catch((error: unknown) => {
  console.error(`rebuild-copies failed: ${(error as Error).message}`);
  process.exit(1);
});
