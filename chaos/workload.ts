import { between } from "../local/random";
import { ACCOUNT_ERASED } from "../src/model/errors";
import type { ChaosClient, Reply } from "./api";

/**
 * What the clients were told: every acknowledged write, so the checker can demand it. A write
 * whose outcome stayed unknown (the client's patience ran out) is marked uncertain and the
 * checker accepts either outcome for it.
 */
export interface Acknowledged {
  /** userId -> the username last acknowledged (undefined while unknown); `erased` once its erasure was answered 202. */
  users: Map<string, { username?: string; uncertain: boolean; erased?: { username?: string; atMs: number } }>;
  posts: Map<string, { authorId: string; title: string; deleted: boolean; uncertain: boolean }>;
  /** commentId -> its post and writer, for comments answered 201. */
  comments: Map<string, { postId: string; userId: string }>;
  /** `${postId}|${userId}` -> liked after the last acknowledged like/unlike; absent or uncertain: either. */
  likes: Map<string, boolean | "uncertain">;
}

export const emptyAcknowledged = (): Acknowledged => ({ users: new Map(), posts: new Map(), comments: new Map(), likes: new Map() });

/** Violations seen while the workload runs (a deleted post served right after its delete was acknowledged). */
export type Report = (violation: string) => void;

type Action = (user: string) => Promise<void>;

/** Words every post's title or content holds (`post`, `content`) or an edited one's (`edited`): what the workload searches for. */
export const SEARCHED = ["post", "content", "edited"];

/**
 * One virtual user's random walk through the product: sign up, then posts, edits, comments,
 * likes and unlikes, deletes, renames and reads of all ten requests, each write retried with
 * its Idempotency-Key until answered.
 */
export class Workload {
  operations = 0;
  private keys = 0;

  constructor(
    private readonly api: ChaosClient,
    private readonly rng: () => number,
    readonly state: Acknowledged,
    private readonly report: Report,
    private readonly usernamePool: number,
    /** At most this many accounts are erased in a run: the others keep the workload going. */
    private readonly maxErasures = 0,
  ) {}

  async step(user: string): Promise<void> {
    this.operations++;
    const profile = this.state.users.get(user);
    if (profile?.erased) return this.writeAfterErasure(user);
    if (!profile || (!profile.username && !profile.uncertain)) return this.signUp(user);
    const actions: [number, Action][] = [
      [14, (u) => this.createPost(u)],
      [5, (u) => this.editPost(u)],
      [18, (u) => this.comment(u)],
      [14, (u) => this.like(u)],
      [5, (u) => this.unlike(u)],
      [3, (u) => this.deletePost(u)],
      [3, (u) => this.rename(u)],
      [this.erasures() < this.maxErasures ? 1 : 0, (u) => this.erase(u)],
      [38, () => this.read()],
    ];
    let pick = this.rng() * actions.reduce((sum, [weight]) => sum + weight, 0);
    for (const [weight, action] of actions) if ((pick -= weight) < 0) return action(user);
  }

  private name(): string {
    return `user_${between(this.rng, 1, this.usernamePool)}`;
  }

  private key(): string {
    return `chaos-${++this.keys}-${Math.floor(this.rng() * 1e9)}`;
  }

  private livePost(filter: (post: { authorId: string }) => boolean = () => true): string | undefined {
    const live = [...this.state.posts.entries()].filter(([, post]) => !post.deleted && !post.uncertain && filter(post));
    return live.length === 0 ? undefined : live[Math.floor(this.rng() * live.length)][0];
  }

  private async signUp(user: string): Promise<void> {
    const username = this.name();
    const reply = await this.api.definite("POST", "/users", { as: user, body: { username } });
    if (reply?.status === 201) this.state.users.set(user, { username, uncertain: false });
    else if (reply?.status === 409) await this.learnUsername(user);
    else if (!reply) this.state.users.set(user, { uncertain: true });
  }

  /** After an ambiguous answer, what the profile really says (Q1 reflects a write at once). */
  private async learnUsername(user: string): Promise<void> {
    const reply = await this.api.definite("GET", `/users/${user}`);
    if (reply?.status === 200) this.state.users.set(user, { username: reply.body.username, uncertain: false });
    else if (reply?.status === 404) this.state.users.set(user, { uncertain: false });
    else this.state.users.set(user, { uncertain: true });
  }

  private async rename(user: string): Promise<void> {
    const username = this.name();
    const reply = await this.api.definite("PUT", `/users/${user}`, { as: user, body: { username } });
    if (reply?.status === 200) this.state.users.set(user, { username, uncertain: false });
    else if (!reply) await this.learnUsername(user);
  }

  private erasures(): number {
    return [...this.state.users.values()].filter((profile) => profile.erased).length;
  }

  /** The account goes: from the 202 on, its token writes nothing, and the checker demands that nothing of it stays. */
  private async erase(user: string): Promise<void> {
    const username = this.state.users.get(user)?.username;
    let reply = await this.api.definite("DELETE", `/users/${user}`, { as: user });
    // Unknown outcome: the erasure's status says whether it was asked for.
    if (!reply) reply = await this.api.definite("GET", `/users/${user}/erasure`, { as: user });
    if (reply?.status === 202 || reply?.status === 200) this.state.users.set(user, { uncertain: false, erased: { username, atMs: Date.now() } });
  }

  /** An erased account's token: every write is refused with the erasure's own problem type. */
  private async writeAfterErasure(user: string): Promise<void> {
    const reply = await this.api.definite("POST", "/posts", { as: user, body: { title: "after", content: "erased" }, idempotencyKey: this.key() });
    if (reply && (reply.status !== 403 || reply.body?.type !== ACCOUNT_ERASED))
      this.report(`erased account ${user} wrote a post: answered ${reply.status} ${JSON.stringify(reply.body?.type ?? "")}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  private async createPost(user: string): Promise<void> {
    const title = `post ${this.operations} by ${user}`;
    const reply = await this.api.definite("POST", "/posts", { as: user, body: { title, content: `content ${this.key()}` }, idempotencyKey: this.key() });
    if (reply?.status === 201) this.state.posts.set(reply.body.postId, { authorId: user, title, deleted: false, uncertain: false });
  }

  private async editPost(user: string): Promise<void> {
    const postId = this.livePost((post) => post.authorId === user);
    if (!postId) return;
    const title = `edited ${this.operations}`;
    const reply = await this.api.definite("PUT", `/posts/${postId}`, { as: user, body: { title, content: "edited content" } });
    const post = this.state.posts.get(postId)!;
    if (reply?.status === 200) post.title = title;
    else if (!reply) post.uncertain = true;
  }

  private async deletePost(user: string): Promise<void> {
    const postId = this.livePost((post) => post.authorId === user);
    if (!postId) return;
    const reply = await this.api.definite("DELETE", `/posts/${postId}`, { as: user });
    const post = this.state.posts.get(postId)!;
    if (reply?.status === 204) {
      post.deleted = true;
      const after = await this.api.definite("GET", `/posts/${postId}`);
      if (after && after.status !== 404) this.report(`deleted post ${postId} answered ${after.status} right after its delete was acknowledged`);
    } else if (!reply) post.uncertain = true;
  }

  private async comment(user: string): Promise<void> {
    const postId = this.livePost();
    if (!postId) return;
    const reply = await this.api.definite("POST", `/posts/${postId}/comments`, {
      as: user,
      body: { content: `comment ${this.operations}` },
      idempotencyKey: this.key(),
    });
    if (reply?.status === 201) this.state.comments.set(reply.body.id, { postId, userId: user });
  }

  private async like(user: string): Promise<void> {
    const postId = this.livePost();
    if (!postId) return;
    this.recordLike(postId, user, await this.api.definite("POST", `/posts/${postId}/likes`, { as: user }), [200, 201], true);
  }

  private async unlike(user: string): Promise<void> {
    const liked = [...this.state.likes.entries()].filter(([key, state]) => state === true && key.endsWith(`|${user}`));
    if (liked.length === 0) return;
    const postId = liked[Math.floor(this.rng() * liked.length)][0].split("|")[0];
    this.recordLike(postId, user, await this.api.definite("DELETE", `/posts/${postId}/likes`, { as: user }), [204, 404], false);
  }

  private recordLike(postId: string, user: string, reply: Reply | undefined, acknowledged: number[], liked: boolean): void {
    const key = `${postId}|${user}`;
    if (reply && acknowledged.includes(reply.status)) this.state.likes.set(key, liked);
    else if (!reply) this.state.likes.set(key, "uncertain");
  }

  /** One of the six queries, on a random subject; checks what a client could see at once. */
  private async read(): Promise<void> {
    const users = [...this.state.users.keys()];
    const user = users[Math.floor(this.rng() * users.length)];
    // Any post, deleted ones included: those must answer 404.
    const posts = [...this.state.posts.keys()];
    const postId = posts.length === 0 ? "none" : posts[Math.floor(this.rng() * posts.length)];
    const paths = [
      `/users/${user}`,
      `/users/${user}/posts?limit=10`,
      `/posts/${postId}`,
      `/posts/${postId}/comments?limit=20`,
      `/posts/${postId}/likes?limit=20`,
      `/feed?limit=${between(this.rng, 1, 100)}`,
      `/search?q=${SEARCHED[Math.floor(this.rng() * SEARCHED.length)]}&limit=20`,
    ];
    const path = paths[Math.floor(this.rng() * paths.length)];
    // Deleted before the read was sent: a read already on its way when another user's delete is
    // acknowledged may still see the post, and that is no violation.
    const deletedIds = new Set([...this.state.posts.entries()].filter(([, post]) => post.deleted && !post.uncertain).map(([id]) => id));
    const deleted = [...deletedIds].find((id) => path.startsWith(`/posts/${id}`));
    const reply = await this.api.definite("GET", path);
    if (deleted && reply && reply.status !== 404) this.report(`deleted post ${deleted} served by GET ${path} (${reply.status})`);
    if (path.startsWith("/search") && reply?.status === 200)
      for (const item of reply.body.items as { postId: string }[])
        if (deletedIds.has(item.postId)) this.report(`deleted post ${item.postId} found by GET ${path}`);
  }
}
