import { devToken, LOCAL_DEV_SECRET } from "../local/dev-auth";
import { startLocalSystem } from "../local/system";
import { msUntil, percentile } from "./measure";

export interface PipelineFigures {
  /** Time from a post's 201 until it is in both the feed (Q6) and the author's list (Q3). */
  postVisibleMs: { samples: number; p50: number; p95: number; max: number };
  /** Time from a rename's 200 until no item anywhere carries the old name. */
  rename: { items: number; posts: number; ms: number };
}

/**
 * The change feed pipeline on the local host (embedded Cosmos DB, pumps, orchestration), over
 * HTTP: the targets are Q3/Q6 within 2 s and a rename of 10,000 items in 500 posts within 10 s locally.
 * The change feed is polled as each trigger registers it (feedPollDelay), as in Azure.
 */
export async function measurePipeline(options: { posts: number; renameItems: number; renamePosts: number }): Promise<PipelineFigures> {
  const system = await startLocalSystem({ port: 0 });
  const token = await devToken("pipeline-author", LOCAL_DEV_SECRET);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${system.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}`);
    return response.status === 204 ? undefined : ((await response.json()) as { id: string; items: { id: string }[] });
  };
  /** Runs `work(i)` for i in [0, count), 16 at a time. */
  const inParallel = async (count: number, work: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(16, count) }, async () => {
        while (next < count) await work(next++);
      }),
    );
  };
  const waitUntil = (check: () => Promise<boolean>, limitMs: number) => msUntil(check, { everyMs: 5, limitMs, what: "the pipeline converged" });
  try {
    await call("POST", "/users", { username: "before" });
    const visible: number[] = [];
    for (let i = 0; i < options.posts; i++) {
      const { id } = (await call("POST", "/posts", { title: `visible ${i}`, content: "c" }))!;
      visible.push(
        await waitUntil(
          async () =>
            (await call("GET", "/feed?limit=1"))!.items[0]?.id === id && (await call("GET", "/users/pipeline-author/posts?limit=1"))!.items[0]?.id === id,
          60_000,
        ),
      );
    }

    // Items of the author: renamePosts posts, and comments on them until there are renameItems.
    const postIds: string[] = [];
    const newPosts = Math.max(0, options.renamePosts - options.posts);
    await inParallel(newPosts, async () => void postIds.push((await call("POST", "/posts", { title: "rename", content: "c" }))!.id));
    const comments = Math.max(0, options.renameItems - options.posts - postIds.length);
    const targets = postIds.length > 0 ? postIds : [];
    await inParallel(
      targets.length > 0 ? comments : 0,
      async (i) => void (await call("POST", `/posts/${targets[i % targets.length]}/comments`, { content: "mine" })),
    );
    const existing = options.posts;
    const { posts, users, feed } = system.store;
    const withName = async (name: string) => {
      let total = 0;
      for (const container of [posts, users, feed]) {
        const { resources } = await container.items
          .query<number>({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.userUsername = @name", parameters: [{ name: "@name", value: name }] })
          .fetchAll();
        total += resources[0] ?? 0;
      }
      return total;
    };
    const items =
      (
        await posts.items
          .query<number>({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.userId = @u", parameters: [{ name: "@u", value: "pipeline-author" }] })
          .fetchAll()
      ).resources[0] ?? 0;
    // Let the copies settle first, so the rename is measured on its own.
    await waitUntil(async () => (await withName("before")) === items + 2 * (existing + postIds.length) - Math.max(0, existing + postIds.length - 100), 300_000);
    await call("PUT", "/users/pipeline-author", { username: "after" });
    const ms = await waitUntil(async () => (await withName("before")) === 0, 300_000);
    const sorted = [...visible].sort((a, b) => a - b);
    return {
      postVisibleMs: { samples: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] },
      rename: { items, posts: existing + postIds.length, ms },
    };
  } finally {
    await system.stop();
  }
}
