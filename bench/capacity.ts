import { randomUUID } from "node:crypto";
import { requestUnits } from "embedded-cosmos";
import { commandLine, defineCommand } from "../local/command-line";
import { likeId, type LikeItem, type UserItem } from "../src/model/items";
import type { BlogStore } from "../src/store/client";
import { handlePostsChanges } from "../src/pipeline/posts-change-feed";
import { createComment, createPost, likePost, readPost } from "../src/store/posts";
import { exportedPostsPage, exportedWritingPage } from "../src/store/account-export";
import { eraseOwnPostsPage, eraseWritingPage, requestErasure } from "../src/store/erasure";
import { measureFeatures, meteredStore } from "./calibrate";

/** The cost model's figures that docs/capacity.md is written from (`npm run capacity` prints them). */
export interface CapacityFigures {
  /** The ten requests of our V3, as the benchmark's scenarios make them. */
  requests: Record<string, number>;
  /** What one like costs when it shares a changeLikes call with others (group commit), by batch size. */
  likeInBatchOf: Record<number, number>;
  /** The posts change feed's work for one new post, the feed full: the author's list copy, the feed copy and its post-trigger. */
  newPostPipeline: number;
  /** Its work for a counter change of a post in the feed, the feed refresh deferred (the author's list copy only). */
  counterChangePipeline: number;
  /** Its work for a comment's or like's own change: the writer's profile read, and where they wrote recorded (first on a post, or again). */
  contributionPipeline: { first: number; again: number };
  /** Leaving: an export page of LEAVING_PAGE posts, and of LEAVING_PAGE posts written on; the erasure's page of as many own posts and posts written on (a comment and a like on each). */
  leaving: { exportPosts: number; exportWriting: number; eraseOwnPosts: number; eraseWriting: number };
}

/** The page size the leaving figures are given for. */
export const LEAVING_PAGE = 20;

export const LIKE_BATCHES = [1, 5, 20];
const FEED_SIZE = 100;

const user = (n: number): UserItem => ({ id: `c${n}`, type: "user", userId: `c${n}`, username: `capacity_${n}`, creationDate: new Date().toISOString() });

/** A new post run through the posts change feed handler as the trigger hands it over; returns its id. */
async function publish(store: BlogStore, n: number): Promise<string> {
  const { post } = await createPost(store, randomUUID(), user(n % 10), { title: `post ${n}`, content: "x".repeat(400) });
  await handlePostsChanges(store, [{ ...post, _lsn: n + 1 }]);
  return post.postId;
}

/** A feed refresh is an orchestration: deferred here, as the posts change feed defers it within FEED_REFRESH_SECONDS. */
const deferredRefreshes = { orchestrations: { ensureStarted: async () => undefined } };

/** The figures, measured on an embedded server with the committed coefficients. */
export async function capacityFigures(options = { users: 40, seed: 7, iterations: 3 }): Promise<CapacityFigures> {
  const features = await measureFeatures(options);
  const requests = Object.fromEntries(Object.entries(features.v3).map(([id, f]) => [id, requestUnits(f)]));
  const metered = await meteredStore("capacity");
  const { store } = metered;
  try {
    for (let n = 0; n < FEED_SIZE; n++) await publish(store, n);
    let newest = "";
    const newPostPipeline = requestUnits(await metered.measure(async () => (newest = await publish(store, FEED_SIZE))));
    await likePost(store, newest, user(99));
    const liked = (await readPost(store, newest))!;
    const counterChangePipeline = requestUnits(await metered.measure(() => handlePostsChanges(store, [{ ...liked, _lsn: FEED_SIZE + 2 }], deferredRefreshes)));
    const { resource: like } = await store.posts.item(likeId(user(99).userId), newest).read<LikeItem>();
    const likeChange = () => handlePostsChanges(store, [{ ...like!, _lsn: FEED_SIZE + 3 }], deferredRefreshes);
    const contributionPipeline = { first: requestUnits(await metered.measure(likeChange)), again: requestUnits(await metered.measure(likeChange)) };
    // A like alone, then 1 + B at once: the first goes alone, the other B wait and share the next call.
    let liker = 100;
    const likes = async (count: number) => {
      const { post } = await createPost(store, randomUUID(), user(0), { title: "liked", content: "x".repeat(400) });
      return () => Promise.all(Array.from({ length: count }, () => likePost(store, post.postId, user(liker++))));
    };
    const alone = requestUnits(await metered.measure(await likes(1)));
    const likeInBatchOf: Record<number, number> = { 1: alone };
    for (const batch of LIKE_BATCHES.filter((b) => b > 1)) {
      const together = requestUnits(await metered.measure(await likes(1 + batch)));
      likeInBatchOf[batch] = Math.round(((together - alone) / batch) * 100) / 100;
    }
    const leaving = await leavingFigures(metered);
    return { requests, likeInBatchOf, newPostPipeline, counterChangePipeline, contributionPipeline, leaving };
  } finally {
    await metered.dispose();
  }
}

/** A user with LEAVING_PAGE posts of their own and a comment and a like on LEAVING_PAGE posts of others', exported a page at a time, then erased. */
async function leavingFigures(metered: Awaited<ReturnType<typeof meteredStore>>): Promise<CapacityFigures["leaving"]> {
  const { store } = metered;
  const leaver = user(200);
  const others: string[] = [];
  for (let n = 0; n < LEAVING_PAGE; n++) {
    await publish(store, 300 + n); // authors c0-c9: their posts, copies and the feed
    const { post } = await createPost(store, randomUUID(), leaver, { title: `mine ${n}`, content: "x".repeat(400) });
    await handlePostsChanges(store, [{ ...post, _lsn: 1000 + n }], deferredRefreshes);
    const { post: theirs } = await createPost(store, randomUUID(), user(n % 10), { title: `theirs ${n}`, content: "x".repeat(400) });
    const { comment } = await createComment(store, theirs.postId, leaver, randomUUID(), "a comment of 40 characters, more or less");
    await likePost(store, theirs.postId, leaver);
    await handlePostsChanges(store, [{ ...comment, type: "comment", postId: theirs.postId, _lsn: 2000 + n }], deferredRefreshes);
    others.push(theirs.postId);
  }
  await store.users.items.create(leaver);
  const exportPosts = requestUnits(await metered.measure(() => exportedPostsPage(store, leaver.userId, LEAVING_PAGE)));
  const exportWriting = requestUnits(await metered.measure(() => exportedWritingPage(store, leaver.userId, LEAVING_PAGE)));
  await requestErasure(store, leaver.userId, "self");
  const eraseOwnPosts = requestUnits(await metered.measure(() => eraseOwnPostsPage(store, leaver.userId, LEAVING_PAGE)));
  const eraseWriting = requestUnits(await metered.measure(() => eraseWritingPage(store, leaver.userId, LEAVING_PAGE)));
  return { exportPosts, exportWriting, eraseOwnPosts, eraseWriting };
}

/** `npm run capacity`: the figures docs/capacity.md is written from (a test checks they still agree). */
function printCapacityFigures(figures: CapacityFigures): void {
  console.log("figures for docs/capacity.md (the model, our V3):");
  console.log(
    `  ${Object.entries(figures.requests)
      .map(([id, ru]) => `${id} ${ru.toFixed(2)}`)
      .join(", ")}`,
  );
  console.log(
    `  a like in a call of B: ${Object.entries(figures.likeInBatchOf)
      .map(([b, ru]) => `B=${b} ${ru.toFixed(2)}`)
      .join(", ")}`,
  );
  console.log(`  the posts change feed's work for a new post (feed full): ${figures.newPostPipeline.toFixed(2)}`);
  console.log(`  ... for a counter change, the feed refresh deferred: ${figures.counterChangePipeline.toFixed(2)}`);
  console.log(
    `  ... for a comment's or like's own change, where they wrote recorded: first on a post ${figures.contributionPipeline.first.toFixed(2)}, again ${figures.contributionPipeline.again.toFixed(2)}`,
  );
  const { exportPosts, exportWriting, eraseOwnPosts, eraseWriting } = figures.leaving;
  console.log(
    `  leaving, per page of ${LEAVING_PAGE}: export posts ${exportPosts.toFixed(2)}, export writing ${exportWriting.toFixed(2)}, erase own posts ${eraseOwnPosts.toFixed(2)}, erase writing ${eraseWriting.toFixed(2)}`,
  );
}

const COMMAND = defineCommand({
  name: "npm run capacity",
  summary:
    "Prints the cost model's RU for every request, a like in a batch, the pipeline's work per change and leaving: the figures docs/capacity.md is written from.",
  flags: {},
  examples: ["npm run capacity"],
});

if (require.main === module) {
  commandLine(COMMAND);
  void capacityFigures().then(printCapacityFigures);
}
