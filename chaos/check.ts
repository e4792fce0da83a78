import type { Container, CosmosClient } from "@azure/cosmos";
import { itemProblem } from "../src/model/item-schemas";
import { usernameClaimId } from "../src/model/items";
import type { ChaosClient } from "./api";
import { SEARCHED, type Acknowledged } from "./workload";

/** An item as the checker reads it straight from a container. */
interface Stored {
  id: string;
  type: string;
  postId?: string;
  userId?: string;
  username?: string;
  ownerId?: string;
  userUsername?: string;
  title?: string;
  content?: string;
  commentCount?: number;
  likeCount?: number;
  creationDate?: string;
  deleted?: boolean;
  completedDate?: string;
}

const all = async (container: Container): Promise<Stored[]> => (await container.items.query<Stored>("SELECT * FROM c").fetchAll()).resources;
const live = (item: Stored) => !item.deleted;
/** The items of the posts container by partition (postId): each check looks at one post's items. */
function byPartition(items: Stored[]): Map<string, Stored[]> {
  const partitions = new Map<string, Stored[]>();
  for (const item of items) {
    const partition = partitions.get(item.postId!);
    if (partition) partition.push(item);
    else partitions.set(item.postId!, [item]);
  }
  return partitions;
}

const newestFirst = (a: Stored, b: Stored) =>
  b.creationDate! < a.creationDate! ? -1 : b.creationDate! > a.creationDate! ? 1 : b.id < a.id ? -1 : b.id > a.id ? 1 : 0;

/**
 * Every guarantee of the README's Guarantees section, checked against the data (read straight
 * from the containers) and against what the API serves. Returns one line per violation.
 */
export async function checkGuarantees(
  client: CosmosClient,
  databaseName: string,
  api: ChaosClient,
  acknowledged: Acknowledged,
  malformed: readonly { source: "posts" | "users"; id: string }[] = [],
): Promise<string[]> {
  const database = client.database(databaseName);
  const [allUsers, allPosts, feed, deadLetters] = await Promise.all(["users", "posts", "feed", "deadLetters"].map((name) => all(database.container(name))));
  const violations: string[] = [];
  // Documents written malformed behind the API's back are no part of the product: each must be set aside, none served.
  for (const { source, id } of malformed) {
    if (!deadLetters.some((letter) => (letter as Stored & { documentId?: string }).documentId === id))
      violations.push(`malformed ${source} document ${id} was not set aside as a dead letter`);
  }
  const users = allUsers.filter((item) => itemProblem("users", item) === undefined);
  const posts = allPosts.filter((item) => itemProblem("posts", item) === undefined);
  const profiles = new Map(users.filter((item) => item.type === "user").map((user) => [user.userId!, user]));

  // Usernames are unique and claimed by their profile.
  const byName = new Map<string, string>();
  for (const profile of profiles.values()) {
    const key = profile.username!.toLowerCase();
    if (byName.has(key)) violations.push(`username '${profile.username}' is used by both ${byName.get(key)} and ${profile.userId}`);
    byName.set(key, profile.userId!);
    const claim = users.find((item) => item.id === usernameClaimId(profile.username!));
    if (claim?.ownerId !== profile.userId)
      violations.push(`username '${profile.username}' of ${profile.userId} is not claimed by them (claim: ${claim?.ownerId ?? "none"})`);
  }

  // Counts equal the items.
  const livePosts = posts.filter((item) => item.type === "post" && live(item));
  const partitions = byPartition(posts);
  for (const post of livePosts) {
    const inPartition = (partitions.get(post.postId!) ?? []).filter(live);
    const comments = inPartition.filter((item) => item.type === "comment").length;
    const likes = inPartition.filter((item) => item.type === "like").length;
    if (post.commentCount !== comments) violations.push(`post ${post.postId}: commentCount ${post.commentCount}, ${comments} comments`);
    if (post.likeCount !== likes) violations.push(`post ${post.postId}: likeCount ${post.likeCount}, ${likes} likes`);
  }

  // No old username anywhere: every live item carries its user's current name.
  for (const [where, items] of [
    ["posts", posts],
    ["users", users.filter((item) => item.type === "post")],
    ["feed", feed],
  ] as const) {
    for (const item of items.filter((i) => live(i) && i.userUsername !== undefined)) {
      const current = profiles.get(item.userId!)?.username;
      if (current !== undefined && item.userUsername !== current)
        violations.push(`${where}: ${item.type} ${item.id} of ${item.userId} carries '${item.userUsername}', not '${current}'`);
    }
  }

  // The feed is the 100 newest live posts.
  const expectedFeed = [...livePosts]
    .sort(newestFirst)
    .slice(0, 100)
    .map((post) => post.id);
  const served = await api.definite("GET", "/feed?limit=100");
  const servedFeed = (served?.body?.items ?? []).map((item: Stored) => item.id);
  if (JSON.stringify(servedFeed) !== JSON.stringify(expectedFeed))
    violations.push(
      `feed: serves ${servedFeed.length} posts, expected the ${expectedFeed.length} newest live ones (first difference at ${servedFeed.findIndex((id: string, i: number) => id !== expectedFeed[i])})`,
    );
  if (feed.filter(live).length > 100) violations.push(`feed container holds ${feed.filter(live).length} live items (at most 100)`);

  // Each author's list is their live posts, newest first.
  for (const userId of profiles.keys()) {
    const expected = livePosts
      .filter((post) => post.userId === userId)
      .sort(newestFirst)
      .map((post) => post.id);
    const listed = await listAll(api, `/users/${userId}/posts`);
    if (JSON.stringify(listed) !== JSON.stringify(expected))
      violations.push(`Q3 of ${userId}: lists ${listed?.length ?? "nothing"} posts, expected ${expected.length}`);
  }

  violations.push(...(await checkSearch(api, livePosts, acknowledged)));
  violations.push(...checkErasures([...allUsers, ...allPosts, ...feed, ...deadLetters], acknowledged));
  violations.push(...(await checkAcknowledged(partitions, profiles, api, acknowledged)));
  return violations;
}

/** How long an erased account's username claim may outlive the erasure: the claim grace (60 s), the sweep's recheck (65 s) and a margin. */
const CLAIM_RELEASE_MS = 140_000;

/** The accounts whose erasure was acknowledged (202), with the name they had and when. */
const erasedAccounts = (acknowledged: Acknowledged) =>
  new Map([...acknowledged.users].flatMap(([userId, user]) => (user.erased ? [[userId, user.erased] as const] : [])));

/**
 * Every acknowledged erasure is complete, and nothing live in any container is the erased
 * user's: no profile, no post, comment, like, copy or record of theirs, only the erasure record,
 * soft-deleted items waiting for their TTL, and (for a while) the claim of their old name.
 */
function checkErasures(documents: Stored[], acknowledged: Acknowledged): string[] {
  const violations: string[] = [];
  for (const [userId, { atMs }] of erasedAccounts(acknowledged)) {
    const record = documents.find((doc) => doc.id === userId && doc.userId === userId && (doc.type === "erasure" || doc.type === "user"));
    if (record?.type !== "erasure" || !record.completedDate) violations.push(`erasure of ${userId} is not complete (${record?.type ?? "no document"})`);
    for (const doc of documents) {
      const theirs = doc.userId === userId || doc.ownerId === userId || doc.id === `like:${userId}`;
      if (!theirs || doc.deleted || (doc.type === "erasure" && doc.id === userId)) continue;
      if (doc.type === "username" && Date.now() - atMs < CLAIM_RELEASE_MS) continue;
      violations.push(`erased account ${userId}: ${doc.type} ${doc.id} is still there`);
    }
  }
  return violations;
}

/** Every page of a list route; undefined if it could not be read. */
async function listAll(api: ChaosClient, path: string): Promise<string[] | undefined> {
  const ids: string[] = [];
  let token: string | undefined;
  do {
    const reply = await api.definite("GET", `${path}?limit=100${token ? `&continuationToken=${encodeURIComponent(token)}` : ""}`);
    if (reply?.status !== 200) return undefined;
    ids.push(...reply.body.items.map((item: Stored) => item.id));
    token = reply.body.continuationToken ?? undefined;
  } while (token);
  return ids;
}

/** Every acknowledged write is there (and every acknowledged delete is gone, for every route). */
async function checkAcknowledged(
  partitions: Map<string, Stored[]>,
  profiles: Map<string, Stored>,
  api: ChaosClient,
  acknowledged: Acknowledged,
): Promise<string[]> {
  const violations: string[] = [];
  const erased = erasedAccounts(acknowledged);
  for (const [userId, user] of acknowledged.users) {
    if (!user.erased && !user.uncertain && user.username !== undefined && profiles.get(userId)?.username !== user.username)
      violations.push(`user ${userId}: acknowledged username '${user.username}', stored '${profiles.get(userId)?.username}'`);
  }
  const item = (postId: string, id: string) => partitions.get(postId)?.find((p) => p.id === id);
  // An erased author's posts are gone as deleted ones are, with what others left on them.
  const gone = (post: { deleted: boolean; authorId: string }) => post.deleted || erased.has(post.authorId);
  for (const [postId, post] of acknowledged.posts) {
    if (post.uncertain) continue;
    const stored = item(postId, postId);
    if (gone(post)) {
      for (const path of [`/posts/${postId}`, `/posts/${postId}/comments`, `/posts/${postId}/likes`]) {
        const reply = await api.definite("GET", path);
        if (reply?.status !== 404) violations.push(`deleted post ${postId}: GET ${path} answered ${reply?.status ?? "nothing"}`);
      }
    } else if (!stored || stored.deleted) violations.push(`acknowledged post ${postId} is missing`);
    else if (stored.title !== post.title) violations.push(`post ${postId}: acknowledged title '${post.title}', stored '${stored.title}'`);
  }
  for (const [commentId, { postId, userId }] of acknowledged.comments) {
    const post = acknowledged.posts.get(postId);
    if (post && !gone(post) && !post.uncertain && !erased.has(userId) && !item(postId, commentId))
      violations.push(`acknowledged comment ${commentId} on ${postId} is missing`);
  }
  for (const [key, liked] of acknowledged.likes) {
    const [postId, userId] = key.split("|");
    const post = acknowledged.posts.get(postId);
    if (liked === "uncertain" || !post || gone(post) || post.uncertain || erased.has(userId)) continue;
    const like = partitions.get(postId)?.find((p) => p.type === "like" && p.userId === userId && live(p));
    if (liked !== Boolean(like))
      violations.push(`like of ${userId} on ${postId}: acknowledged ${liked ? "liked" : "unliked"}, stored ${like ? "liked" : "not liked"}`);
  }
  return violations;
}

/** How many live posts the checker looks for by their own words: each is a search over every partition. */
const SEARCHED_POSTS = 40;

/**
 * Search answers no deleted post and no post of an erased account, on any page of a search for
 * words every post holds (the data is settled when the checker runs), and finds live posts by
 * their own words: a post's content holds a key of its own (`content chaos-<n>-<number>`).
 * Deep pages of a ranking with many equal scores may order the ties differently from one page
 * to the next (the SDKs merge the partitions' ties in no set order), so completeness is checked
 * post by post, not by paging.
 */
async function checkSearch(api: ChaosClient, livePosts: readonly Stored[], acknowledged: Acknowledged): Promise<string[]> {
  const violations: string[] = [];
  const live = new Set(livePosts.map((post) => post.postId));
  const erased = new Set([...acknowledged.users.entries()].filter(([, user]) => user.erased).map(([userId]) => userId));
  for (const word of SEARCHED) {
    let token: string | null = null;
    do {
      const reply = await api.definite("GET", `/search?q=${word}&limit=100${token ? `&continuationToken=${token}` : ""}`);
      if (reply?.status !== 200) {
        violations.push(`search for '${word}' answered ${reply?.status ?? "nothing"}`);
        break;
      }
      for (const item of reply.body.items as { postId: string; userId: string }[]) {
        if (!live.has(item.postId)) violations.push(`search for '${word}' found post ${item.postId}, which is not live`);
        if (erased.has(item.userId)) violations.push(`search for '${word}' found post ${item.postId} of erased account ${item.userId}`);
      }
      token = reply.body.continuationToken as string | null;
    } while (token);
  }
  const keyed = livePosts.flatMap((post) => {
    const key = /content chaos-\d+-(\d+)/.exec(post.content ?? "")?.[1];
    return key ? [{ postId: post.postId!, key }] : [];
  });
  for (const { postId, key } of keyed.slice(0, SEARCHED_POSTS)) {
    const reply = await api.definite("GET", `/search?q=${key}&limit=100`);
    if (reply?.status === 200 && !(reply.body.items as { postId: string }[]).some((item) => item.postId === postId))
      violations.push(`search for '${key}' does not find post ${postId}, whose content holds it`);
  }
  return violations;
}
