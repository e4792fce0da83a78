import { parseArgs } from "node:util";
import { rebuildCopies } from "../src/pipeline/rebuild";
import { store } from "../src/store/client";
import { ProgressBar } from "./progress";

/** `npm run rebuild-copies [-- --fresh]`: replays the posts change feed into the Q3/Q6 copies. */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { fresh: { type: "boolean", default: false } } });
  const bar = new ProgressBar("replaying posts", 0);
  const result = await rebuildCopies({ fresh: values.fresh ?? false, progress: { total: (n) => bar.setTotal(n), advance: (n) => bar.tick(n) } });
  bar.finish(`rebuilt the copies from ${result.posts} posts${values.fresh ? ` (${result.cleared} old copies removed first)` : ""}`);
  store().dispose();
}

main().catch((error: unknown) => {
  console.error(`rebuild-copies failed: ${(error as Error).message}`);
  process.exit(1);
});
