import { commandLine, defineCommand, refuse } from "../local/command-line";
import { devToken, localDevSecret } from "../local/dev-auth";
import { ProgressBar } from "./progress";
import { between, random } from "../local/random";

export interface SeedOptions {
  users: number;
  /** API base URL, e.g. http://localhost:7071/api */
  baseUrl: string;
  seed: number;
  secret: string;
  concurrency?: number;
  progress?: ProgressBar;
}

export interface SeedResult {
  users: number;
  posts: number;
  comments: number;
  likes: number;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/**
 * Sample data with the article's shape, written through the HTTP API: each user 5-50 posts,
 * each post up to 25 comments and up to 100 likes (by distinct users).
 */
export async function seed(options: SeedOptions): Promise<SeedResult> {
  const rng = random(options.seed);
  const userIds = Array.from({ length: options.users }, (_, i) => `user${String(i + 1).padStart(4, "0")}`);
  const plan = userIds.map((userId) => ({
    userId,
    posts: Array.from({ length: between(rng, 5, 50) }, (_, p) => ({
      title: `${userId} post ${p + 1}`,
      content: `Seeded content ${Math.floor(rng() * 1e9).toString(36)} `.repeat(between(rng, 1, 30)),
      comments: Array.from({ length: between(rng, 0, 25) }, () => userIds[Math.floor(rng() * userIds.length)]),
      likers: [...userIds].sort(() => rng() - 0.5).slice(0, between(rng, 0, Math.min(100, userIds.length))),
    })),
  }));
  const result: SeedResult = { users: 0, posts: 0, comments: 0, likes: 0 };
  const total = plan.reduce((n, u) => n + 1 + u.posts.reduce((m, p) => m + 1 + p.comments.length + p.likers.length, 0), 0);
  options.progress?.setTotal(total);
  const tokens = new Map(await Promise.all(userIds.map(async (id) => [id, await devToken(id, options.secret)] as const)));

  async function call(method: string, path: string, as: string, body?: unknown, accept: number[] = []): Promise<{ id?: string }> {
    const response = await fetch(`${options.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens.get(as)}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).catch((error: unknown) => {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `cannot reach the API at ${options.baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message}): is npm start running there? Pass --url otherwise.`,
      );
    });
    options.progress?.tick();
    if (!response.ok && !accept.includes(response.status)) throw new Error(`${method} ${path} -> ${response.status} ${await response.text()}`);
    return response.status === 204 ? {} : ((await response.json()) as { id?: string });
  }

  const concurrency = options.concurrency ?? 8;
  // A re-run finds the profiles already there (409) and adds more posts.
  await pool(userIds, concurrency, async (userId) => {
    await call("POST", "/users", userId, { username: userId }, [409]);
    result.users++;
  });
  const posts = plan.flatMap((user) => user.posts.map((post) => ({ ...post, userId: user.userId })));
  await pool(posts, concurrency, async (post) => {
    const { id } = await call("POST", "/posts", post.userId, { title: post.title, content: post.content });
    result.posts++;
    for (const commenter of post.comments) {
      await call("POST", `/posts/${id}/comments`, commenter, { content: `Comment by ${commenter}` });
      result.comments++;
    }
    for (const liker of post.likers) {
      await call("POST", `/posts/${id}/likes`, liker);
      result.likes++;
    }
  });
  return result;
}

async function main(): Promise<void> {
  const command = defineCommand({
    name: "npm run seed",
    summary: "Fills a running API (npm start) with users, posts, comments and likes, through its HTTP API and dev tokens.",
    flags: {
      users: { type: "string", default: "10", value: "n", description: "how many users, each with posts, comments and likes (1-100000)" },
      url: {
        type: "string",
        default: process.env.API_URL ?? `http://localhost:${process.env.PORT ?? 7071}/api`,
        value: "url",
        description: "the API's base URL (API_URL, or PORT)",
      },
      seed: { type: "string", default: "42", value: "n", description: "the random seed: the same seed makes the same data" },
      concurrency: { type: "string", default: "8", value: "n", description: "requests in flight" },
    },
    examples: ["npm run seed", "npm run seed -- --users 200 --seed 7"],
  });
  const { values } = commandLine(command);
  const users = Number(values.users);
  if (!Number.isInteger(users) || users < 1 || users > 100_000) refuse(command, "--users must be an integer from 1 to 100000");
  const progress = new ProgressBar("seeding", 0);
  const result = await seed({
    users,
    baseUrl: values.url!,
    seed: Number(values.seed),
    concurrency: Number(values.concurrency),
    secret: localDevSecret(),
    progress,
  });
  progress.finish(`seeded ${result.users} users, ${result.posts} posts, ${result.comments} comments, ${result.likes} likes via ${values.url}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`seed failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
