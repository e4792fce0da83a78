import { ApiError, pageQuery, type Comment, type Like, type Page, type Post, type User } from "./api";
import type { App } from "./app";
import { busy, h, loading, show, when } from "./dom";

const author = (post: { userId: string; userUsername: string }) => h("a", { href: `#/users/${encodeURIComponent(post.userId)}` }, `@${post.userUsername}`);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const counts = (post: Post) =>
  h(
    "div",
    { class: "counts" },
    h("span", { "data-test": "likes" }, `♥ ${plural(post.likeCount, "like")}`),
    h("span", { "data-test": "comments" }, plural(post.commentCount, "comment")),
  );

/** A post in a list: its title, author and date, its text (the short form's, or a search's snippet) and its counts. */
export function postCard(post: Post, text: Node = h("p", { class: "content" }, post.content)): HTMLElement {
  return h(
    "article",
    { class: "card", "data-post": post.postId },
    h("h2", {}, h("a", { href: `#/posts/${post.postId}` }, post.title)),
    h("div", { class: "meta" }, author(post), " · ", when(post.creationDate)),
    text,
    counts(post),
  );
}

/** A list that loads its next page on demand, keeping what it has. */
export function pagedList<T>(app: App, path: string, limit: number, render: (item: T) => Node, empty: string): HTMLElement {
  const list = h("div", { class: "list" });
  const more = h("button", { class: "secondary" }, "Load more") as HTMLButtonElement;
  let token: string | null = null;
  let shown = 0;
  const load = async () => {
    const page = await app.api.get<Page<T>>(`${path}${pageQuery(limit, token, path)}`);
    list.querySelector(".loading")?.remove();
    list.append(...page.items.map(render));
    shown += page.items.length;
    token = page.continuationToken;
    more.hidden = !token;
    if (shown === 0) list.append(h("p", { class: "meta" }, empty));
  };
  more.addEventListener("click", () => void busy(more, "Loading…", load).catch(app.fail));
  const container = h("div", {}, list, more);
  more.hidden = true;
  list.append(loading());
  void load()
    .then(() => list.querySelector(".loading")?.remove())
    .catch((error: unknown) => {
      list.querySelector(".loading")?.remove();
      app.fail(error);
    });
  return container;
}

/** Posts the feed view adds per "Load more", and the most the feed holds (the API serves no more). */
const FEED_PAGE = 20;
const FEED_SIZE = 100;

/**
 * Q6: the newest posts, 20 more per "Load more" up to the feed's 100. Each load asks for the
 * longer list and appends the posts not shown yet that are no newer than the last one shown: a
 * post published meanwhile (at the top) waits for the next visit instead of landing at the bottom,
 * and posts of the same instant keep their place whichever order a query gives them.
 */
export async function feedView(app: App): Promise<void> {
  const list = h("div", { class: "list" });
  const more = h("button", { class: "secondary" }, "Load more") as HTMLButtonElement;
  const end = h("p", { class: "meta", "data-test": "feed-end" });
  let limit = 0;
  const shown = new Set<string>();
  let last: Post | undefined;
  const load = async () => {
    limit = Math.min(limit + FEED_PAGE, FEED_SIZE);
    const { items } = await app.api.get<{ items: Post[] }>(`/feed?limit=${limit}`);
    const fresh = items.filter((post) => !shown.has(post.postId) && (last === undefined || post.creationDate <= last.creationDate));
    for (const post of fresh) shown.add(post.postId);
    list.append(...fresh.map((post) => postCard(post)));
    last = fresh.at(-1) ?? last;
    const whole = items.length < limit || limit === FEED_SIZE;
    more.hidden = whole;
    end.hidden = !whole || last === undefined;
    end.textContent =
      limit === FEED_SIZE && items.length === FEED_SIZE
        ? `That is the whole feed: the ${FEED_SIZE} newest posts. Older ones are on their authors' pages.`
        : "That is every post so far.";
  };
  more.addEventListener("click", () => void busy(more, "Loading…", load).catch(app.fail));
  await load();
  show(app.view, h("h1", {}, "Latest posts"), last === undefined ? h("p", { class: "meta" }, "No posts yet.") : list, more, end);
}

/** Q3: a user and their posts, page by page. */
export async function userView(app: App, userId: string): Promise<void> {
  const user = await app.api.get<User>(`/users/${encodeURIComponent(userId)}`);
  const mine = app.session.userId() === userId;
  const empty = mine ? "You have not written anything yet: your posts will be listed here." : `@${user.username} has not written anything yet.`;
  show(
    app.view,
    h("h1", {}, `@${user.username}`),
    mine ? h("p", { class: "actions" }, h("a", { href: "#/write" }, "Write a post"), h("a", { href: "#/profile" }, "Your profile and data")) : null,
    pagedList<Post>(app, `/users/${encodeURIComponent(userId)}/posts`, 10, (post) => postCard(post), empty),
  );
}

/** Q2 with Q4 and Q5: a post, its comments and its likes; and what the signed-in reader may do. */
export async function postView(app: App, postId: string): Promise<void> {
  const path = `/posts/${encodeURIComponent(postId)}`;
  const [post, likes] = await Promise.all([app.api.get<Post>(path), app.api.get<Page<Like>>(`${path}/likes?limit=100`)]);
  const me = app.session.userId();
  const liked = likes.items.some((like) => like.userId === me);
  const actions = h("div", { class: "actions" });
  if (me) {
    const like = h("button", { class: "secondary", "data-test": "like" }, liked ? "Unlike" : "Like") as HTMLButtonElement;
    like.addEventListener(
      "click",
      () => void busy(like, "Saving…", () => app.api.call(liked ? "DELETE" : "POST", `${path}/likes`)).then(() => postView(app, postId), app.fail),
    );
    actions.append(like);
  }
  if (me === post.userId) {
    actions.append(h("button", { class: "secondary", onclick: () => app.go(`#/posts/${postId}/edit`) }, "Edit"));
    const remove = h("button", { class: "danger" }, "Delete") as HTMLButtonElement;
    remove.addEventListener("click", () => {
      if (!confirm("Delete this post, its comments and likes?")) return;
      void busy(remove, "Deleting…", () => app.api.call("DELETE", path)).then(() => {
        app.tell(`"${post.title}" was deleted, with its comments and likes. It leaves the feed and your page within a few seconds.`);
        app.go("#/");
      }, app.fail);
    });
    actions.append(remove);
  }
  const comments = pagedList<Comment>(
    app,
    `${path}/comments`,
    20,
    (c) => h("div", { class: "comment" }, h("div", { class: "meta" }, author(c), " · ", when(c.creationDate)), h("div", { class: "content" }, c.content)),
    "No comments yet.",
  );
  show(
    app.view,
    h(
      "article",
      { class: "card" },
      h("h1", {}, post.title),
      h("div", { class: "meta" }, author(post), " · ", when(post.creationDate), post.updatedDate ? " (edited)" : ""),
      h("p", { class: "content" }, post.content),
      counts(post),
      actions,
    ),
    h("p", { class: "meta" }, likes.items.length ? `Liked by ${likes.items.map((l) => `@${l.userUsername}`).join(", ")}` : "No likes yet."),
    h("section", { class: "card" }, h("h2", {}, "Comments"), comments, me ? commentForm(app, postId) : h("p", { class: "meta" }, "Sign in to comment.")),
  );
}

function commentForm(app: App, postId: string): HTMLElement {
  const content = h("textarea", {
    id: "comment-content",
    name: "comment",
    required: true,
    maxlength: "2000",
    placeholder: "Write a comment",
  }) as HTMLTextAreaElement;
  const send = h("button", { type: "submit" }, "Comment") as HTMLButtonElement;
  const form = h("form", {}, h("label", { for: "comment-content" }, "Your comment"), content, h("div", { class: "actions" }, send));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = crypto.randomUUID(); // a retry of this submission creates nothing twice
    void busy(send, "Sending…", () => app.api.call("POST", `/posts/${postId}/comments`, { content: content.value }, { "idempotency-key": key })).then(
      () => postView(app, postId),
      app.fail,
    );
  });
  return form;
}

/** C2: write a post, or edit one of yours. */
export async function editorView(app: App, postId?: string): Promise<void> {
  if (!app.session.userId()) return show(app.view, h("p", {}, "Sign in to write."));
  const existing = postId ? await app.api.get<Post>(`/posts/${encodeURIComponent(postId)}`) : undefined;
  const title = h("input", { id: "post-title", name: "title", required: true, maxlength: "200", value: existing?.title ?? "" }) as HTMLInputElement;
  const content = h("textarea", { id: "post-content", name: "content", required: true, maxlength: "20000" }, existing?.content ?? "") as HTMLTextAreaElement;
  const save = h("button", { type: "submit" }, existing ? "Save" : "Publish") as HTMLButtonElement;
  const form = h(
    "form",
    { class: "card" },
    h("h1", {}, existing ? "Edit post" : "New post"),
    h("label", { for: "post-title" }, "Title"),
    title,
    h("label", { for: "post-content" }, "Content"),
    content,
    h("div", { class: "actions" }, save),
  );
  const key = crypto.randomUUID();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { title: title.value, content: content.value };
    const write = () =>
      existing ? app.api.call<Post>("PUT", `/posts/${existing.postId}`, body) : app.api.call<Post>("POST", "/posts", body, { "idempotency-key": key });
    void busy(save, "Saving…", write).then((post) => app.go(`#/posts/${post.postId}`), app.fail);
  });
  show(app.view, form);
}

/** Whether the signed-in account was erased: then it has no profile, and may never make one again. */
async function erasedAccount(app: App, me: string): Promise<boolean> {
  return app.api.getOwn(`/users/${encodeURIComponent(me)}/erasure`).then(
    () => true,
    () => false,
  );
}

/** C1: create your profile, or change your username. */
export async function profileView(app: App): Promise<void> {
  const me = app.session.userId();
  if (!me) return show(app.view, h("p", {}, "Sign in to edit your profile."));
  const current = await app.api.get<User>(`/users/${encodeURIComponent(me)}`).catch((error: unknown) => {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  });
  if (!current && (await erasedAccount(app, me))) return (await import("./leaving")).erasedView(app);
  const username = h("input", {
    id: "profile-username",
    name: "username",
    required: true,
    pattern: "[A-Za-z0-9_.\\-]{3,32}",
    value: current?.username ?? "",
  }) as HTMLInputElement;
  const save = h("button", { type: "submit" }, current ? "Change username" : "Create profile") as HTMLButtonElement;
  const form = h(
    "form",
    { class: "card" },
    h("h1", {}, current ? "Your profile" : "Create your profile"),
    h("label", { for: "profile-username" }, "Username"),
    username,
    h("p", { class: "meta" }, "3-32 letters, digits, '_', '.' or '-'; unique."),
    h("div", { class: "actions" }, save),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const write = () =>
      current
        ? app.api.call("PUT", `/users/${encodeURIComponent(me)}`, { username: username.value })
        : app.api.call("POST", "/users", { username: username.value });
    void busy(save, "Saving…", write).then(() => {
      app.profileChanged();
      app.tell(
        current
          ? `Your username is now @${username.value}. Your posts, comments and likes show it within a few seconds.`
          : `Welcome, @${username.value}: your profile is ready.`,
      );
      app.go(`#/users/${encodeURIComponent(me)}`);
    }, app.fail);
  });
  show(app.view, form);
  if (!current) return;
  // Loaded only here: leaving is rare. The confirmation names how many posts go.
  const [{ leavingCard }, first] = await Promise.all([import("./leaving"), app.api.get<Page<Post>>(`/users/${encodeURIComponent(me)}/posts${pageQuery(100)}`)]);
  const posts = `${plural(first.items.length, "post")}${first.continuationToken ? " or more" : ""}`;
  app.view.append(leavingCard(app, me, current, posts));
}
