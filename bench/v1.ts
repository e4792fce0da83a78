import type { Container } from "@azure/cosmos";
import type { V1Containers } from "./dataset";

/**
 * The article's V1 model, request by request: nothing is denormalized, so usernames are read
 * from `users` per item, counts are aggregate queries per post, and Q3/Q6 query every
 * partition of `posts`. This is the baseline the V3 figures are compared with.
 */
export class V1Strategy {
  constructor(private readonly c: V1Containers) {}

  private async username(userId: string): Promise<string | undefined> {
    const { resource } = await this.c.users.item(userId, userId).read<{ username: string }>();
    return resource?.username;
  }

  private async count(postId: string, type: string): Promise<number> {
    const { resources } = await this.c.posts.items
      .query<number>({ query: "SELECT VALUE COUNT(1) FROM p WHERE p.type = @type", parameters: [{ name: "@type", value: type }] }, { partitionKey: postId })
      .fetchAll();
    return resources[0] ?? 0;
  }

  /** A post with its author's username and its counts: 1 read + 1 user read + 2 aggregate queries. */
  private async complete(post: { postId: string; userId: string }): Promise<object> {
    const [username, commentCount, likeCount] = await Promise.all([
      this.username(post.userId),
      this.count(post.postId, "comment"),
      this.count(post.postId, "like"),
    ]);
    return { ...post, userUsername: username, commentCount, likeCount };
  }

  createUser(userId: string, username: string) {
    return this.c.users.items.create({ id: userId, username });
  }

  getUser(userId: string) {
    return this.username(userId);
  }

  createPost(postId: string, userId: string, title: string, content: string) {
    return this.c.posts.items.create({ id: postId, type: "post", postId, userId, title, content, creationDate: new Date().toISOString() });
  }

  async getPost(postId: string) {
    const { resource } = await this.c.posts.item(postId, postId).read<{ postId: string; userId: string }>();
    return resource && this.complete(resource);
  }

  /** Q3: a cross-partition query for the user's posts, then username and counts per post. */
  async listUserPosts(userId: string) {
    const { resources } = await this.c.posts.items
      .query<{ postId: string; userId: string }>({
        query: "SELECT * FROM p WHERE p.type = @type AND p.userId = @userId ORDER BY p.creationDate DESC",
        parameters: [
          { name: "@type", value: "post" },
          { name: "@userId", value: userId },
        ],
      })
      .fetchAll();
    return Promise.all(resources.map((post) => this.complete(post)));
  }

  createComment(postId: string, commentId: string, userId: string, content: string) {
    return this.c.posts.items.create({ id: commentId, type: "comment", postId, userId, content, creationDate: new Date().toISOString() });
  }

  /** Q4/Q5: the items of one post, then each author's username. */
  private async withUsernames(container: Container, postId: string, type: string) {
    const { resources } = await container.items
      .query<{ userId: string }>({ query: "SELECT * FROM p WHERE p.type = @type", parameters: [{ name: "@type", value: type }] }, { partitionKey: postId })
      .fetchAll();
    return Promise.all(resources.map(async (item) => ({ ...item, userUsername: await this.username(item.userId) })));
  }

  listComments(postId: string) {
    return this.withUsernames(this.c.posts, postId, "comment");
  }

  likePost(postId: string, userId: string) {
    return this.c.posts.items.create({ id: `${userId}-like`, type: "like", postId, userId, creationDate: new Date().toISOString() });
  }

  listLikes(postId: string) {
    return this.withUsernames(this.c.posts, postId, "like");
  }

  /** Q6: the newest posts across every partition, then username and counts per post. */
  async feed(limit: number) {
    const { resources } = await this.c.posts.items
      .query<{ postId: string; userId: string }>({
        query: "SELECT TOP @limit * FROM p WHERE p.type = @type ORDER BY p.creationDate DESC",
        parameters: [
          { name: "@limit", value: limit },
          { name: "@type", value: "post" },
        ],
      })
      .fetchAll();
    return Promise.all(resources.map((post) => this.complete(post)));
  }
}
