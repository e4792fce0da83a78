import type { Container, Database, OperationInput } from "@azure/cosmos";
import { likeId, usernameClaimId, type CommentItem, type LikeItem, type PostItem, type UserItem, type UsernameClaim } from "../src/model/items";
import { toShortForm } from "../src/model/short-form";
import type { BlogStore } from "../src/store/client";
import { FEED_PARTITION } from "../src/store/feed";
import type { PostCopy } from "../src/store/copies";
import { between, random } from "../local/random";

export interface DatasetPost {
  postId: string;
  userId: string;
  title: string;
  content: string;
  creationDate: string;
  comments: { id: string; userId: string; content: string; creationDate: string }[];
  likes: { userId: string; creationDate: string }[];
}

export interface Dataset {
  users: { userId: string; username: string; creationDate: string }[];
  posts: DatasetPost[];
}

const START = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** The article's shape: each user 5-50 posts, each post up to 25 comments and up to 100 likes (distinct users). */
export function generateDataset(userCount: number, seed: number): Dataset {
  const rng = random(seed);
  const users = Array.from({ length: userCount }, (_, i) => ({ userId: `u${i + 1}`, username: `user_${i + 1}`, creationDate: iso(START + i * 1000) }));
  const posts: DatasetPost[] = [];
  for (const user of users) {
    const count = between(rng, 5, 50);
    for (let p = 0; p < count; p++) {
      const created = START + Math.floor(rng() * 300 * 86_400_000);
      const likers = new Set<string>();
      const likeCount = between(rng, 0, Math.min(100, users.length));
      while (likers.size < likeCount) likers.add(users[Math.floor(rng() * users.length)].userId);
      posts.push({
        postId: `p${posts.length + 1}`,
        userId: user.userId,
        title: `Post ${posts.length + 1} by ${user.username}`,
        content: `Lorem ipsum ${Math.floor(rng() * 1e9).toString(36)} `.repeat(between(rng, 5, 60)),
        creationDate: iso(created),
        comments: Array.from({ length: between(rng, 0, 25) }, (_, c) => ({
          id: `p${posts.length + 1}-c${c + 1}`,
          userId: users[Math.floor(rng() * users.length)].userId,
          content: `Comment ${c + 1}`,
          creationDate: iso(created + (c + 1) * 60_000),
        })),
        likes: [...likers].map((userId, l) => ({ userId, creationDate: iso(created + (l + 1) * 30_000) })),
      });
    }
  }
  return { users, posts };
}

export const itemCount = (dataset: Dataset) => dataset.users.length + dataset.posts.reduce((n, p) => n + 1 + p.comments.length + p.likes.length, 0);

type Progress = (items: number) => void;

/** Writes items of one logical partition in transactional batches of at most 100 operations. */
async function writePartition(container: Container, partitionKey: string, items: object[], progress: Progress): Promise<void> {
  for (let i = 0; i < items.length; i += 100) {
    const operations: OperationInput[] = items.slice(i, i + 100).map((item) => ({ operationType: "Upsert", resourceBody: item as never }));
    const response = await container.items.batch(operations, partitionKey);
    if (response.code !== 200) throw new Error(`bulk load into ${container.id}/${partitionKey} failed with ${response.code}`);
    progress(operations.length);
  }
}

/** Runs `work` for every partition with a few batches in flight. */
async function inParallel<T>(entries: T[], work: (entry: T) => Promise<void>, limit = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < entries.length) await work(entries[next++]);
    }),
  );
}

/** The V3 layout, exactly as the product stores it: denormalized posts, copies in `users` and `feed`. */
export async function loadV3(store: BlogStore, dataset: Dataset, progress: Progress): Promise<void> {
  const usernames = new Map(dataset.users.map((u) => [u.userId, u.username]));
  const posts: PostItem[] = dataset.posts.map((p) => ({
    id: p.postId,
    type: "post",
    postId: p.postId,
    userId: p.userId,
    userUsername: usernames.get(p.userId)!,
    title: p.title,
    content: p.content,
    commentCount: p.comments.length,
    likeCount: p.likes.length,
    creationDate: p.creationDate,
  }));
  const copy = (post: PostItem): PostCopy => ({ ...toShortForm(post), sourceLsn: 0 });

  await inParallel(dataset.users, async (user) => {
    const item: UserItem = { id: user.userId, type: "user", userId: user.userId, username: user.username, creationDate: user.creationDate };
    const claimId = usernameClaimId(user.username);
    const claim: UsernameClaim = { id: claimId, type: "username", userId: claimId, ownerId: user.userId, username: user.username };
    await writePartition(store.users, claimId, [claim], () => {});
    await writePartition(store.users, user.userId, [item, ...posts.filter((p) => p.userId === user.userId).map(copy)], progress);
  });
  await inParallel(
    dataset.posts.map((p, i) => ({ p, post: posts[i] })),
    async ({ p, post }) => {
      const comments: CommentItem[] = p.comments.map((c) => ({
        id: c.id,
        type: "comment",
        postId: p.postId,
        userId: c.userId,
        userUsername: usernames.get(c.userId)!,
        content: c.content,
        creationDate: c.creationDate,
      }));
      const likes: LikeItem[] = p.likes.map((l) => ({
        id: likeId(l.userId),
        type: "like",
        postId: p.postId,
        userId: l.userId,
        userUsername: usernames.get(l.userId)!,
        creationDate: l.creationDate,
      }));
      await writePartition(store.posts, p.postId, [post, ...comments, ...likes], progress);
    },
  );
  const newest = [...posts].sort((a, b) => b.creationDate.localeCompare(a.creationDate)).slice(0, 100);
  await writePartition(store.feed, FEED_PARTITION, newest.map(copy), () => {});
}

export interface V1Containers {
  users: Container;
  posts: Container;
}

/** The article's V1 layout: no denormalization; users (pk /id) and posts with comments and likes (pk /postId). */
export async function createV1Containers(database: Database): Promise<V1Containers> {
  const { container: users } = await database.containers.createIfNotExists({ id: "v1_users", partitionKey: { paths: ["/id"] } });
  const { container: posts } = await database.containers.createIfNotExists({ id: "v1_posts", partitionKey: { paths: ["/postId"] } });
  return { users, posts };
}

export async function loadV1(v1: V1Containers, dataset: Dataset, progress: Progress): Promise<void> {
  await inParallel(dataset.users, (u) => writePartition(v1.users, u.userId, [{ id: u.userId, username: u.username }], progress));
  await inParallel(dataset.posts, (p) =>
    writePartition(
      v1.posts,
      p.postId,
      [
        { id: p.postId, type: "post", postId: p.postId, userId: p.userId, title: p.title, content: p.content, creationDate: p.creationDate },
        ...p.comments.map((c) => ({ id: c.id, type: "comment", postId: p.postId, userId: c.userId, content: c.content, creationDate: c.creationDate })),
        ...p.likes.map((l) => ({ id: `${l.userId}-like`, type: "like", postId: p.postId, userId: l.userId, creationDate: l.creationDate })),
      ],
      progress,
    ),
  );
}
