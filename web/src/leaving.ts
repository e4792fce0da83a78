import type { Erasure, ExportPage, User } from "./api";
import { busy, h, show } from "./dom";
import type { App } from "./app";

const own = (me: string) => `/users/${encodeURIComponent(me)}`;

/** `writing` with a post that went on from one page to the next joined back into one entry. */
function joinWriting(writing: ExportPage["writing"], more: ExportPage["writing"]): ExportPage["writing"] {
  const last = writing[writing.length - 1];
  const [first, ...rest] = more;
  if (!last || !first || first.postId !== last.postId) return [...writing, ...more];
  return [...writing.slice(0, -1), { ...last, comments: [...last.comments, ...first.comments] }, ...rest];
}

/** Every page of the export joined into the one document the person keeps (the API pages it so no request loads it all). */
async function wholeExport(app: App, me: string): Promise<Omit<ExportPage, "continuationToken">> {
  let token: string | null = null;
  let whole: Omit<ExportPage, "continuationToken"> | undefined;
  do {
    const query: string = `?limit=100${token ? `&continuationToken=${encodeURIComponent(token)}` : ""}`;
    const { continuationToken, ...page }: ExportPage = await app.api.getOwn<ExportPage>(`${own(me)}/export${query}`);
    whole = whole ? { ...whole, posts: [...whole.posts, ...page.posts], writing: joinWriting(whole.writing, page.writing) } : page;
    token = continuationToken;
  } while (token);
  return whole;
}

/** Saves `document` as a file, as the browser saves any download. */
function save(document: unknown, name: string): void {
  const link = h("a", { href: URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: "application/json" })), download: name });
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.getAttribute("href")!), 60_000);
}

/** Where a person lands after their account was erased (signed out). */
export const erasedView = (app: App) =>
  show(
    app.view,
    h("section", { class: "card" }, h("h1", {}, "Your account was erased"), h("p", {}, "Everything you wrote is gone. Thank you for writing here.")),
  );

/** Polls the erasure's status until it is complete, showing the counts as they grow. */
async function follow(app: App, me: string, status: HTMLElement): Promise<void> {
  for (;;) {
    const erasure = await app.api.getOwn<Erasure>(`${own(me)}/erasure`);
    const { posts, comments, likes } = erasure.progress;
    show(status, `Erasing: ${posts} posts, ${comments} comments and ${likes} likes removed so far.`);
    if (erasure.status === "completed") return show(status, `Your account was erased: ${posts} posts, ${comments} comments and ${likes} likes removed.`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * "Your data": download it all, or erase the account. Erasing asks first, naming what goes:
 * the profile and its username, every post (with the comments and likes others left on them),
 * every comment and like the person left elsewhere.
 */
export function leavingCard(app: App, me: string, user: User, postCount: string): HTMLElement {
  const download = h("button", { class: "secondary" }, "Download my data") as HTMLButtonElement;
  download.addEventListener(
    "click",
    () => void busy(download, "Preparing…", async () => save(await wholeExport(app, me), `blog-export-${me}.json`)).catch(app.fail),
  );
  const status = h("p", { class: "meta", role: "status" });
  const erase = h("button", { class: "danger" }, "Erase my account") as HTMLButtonElement;
  const cancel = h("button", { class: "secondary" }, "Cancel");
  const confirmation = h(
    "div",
    { class: "confirm", role: "alertdialog", "aria-label": "Erase your account?" },
    h("p", {}, h("strong", {}, "Erase your account? This cannot be undone. You lose:")),
    h(
      "ul",
      {},
      h("li", {}, `your profile and the username @${user.username} (someone else may take it)`),
      h("li", {}, `your ${postCount}, with every comment and like on them`),
      h("li", {}, "every comment and like you left on other posts"),
    ),
    h("div", { class: "actions" }, erase, cancel),
  );
  confirmation.hidden = true;
  const ask = h("button", { class: "danger" }, "Delete my account…") as HTMLButtonElement;
  ask.addEventListener("click", () => (confirmation.hidden = false));
  cancel.addEventListener("click", () => (confirmation.hidden = true));
  erase.addEventListener("click", () => {
    void busy(erase, "Erasing…", async () => {
      await app.api.call("DELETE", own(me));
      confirmation.hidden = true;
      ask.disabled = download.disabled = true;
      await follow(app, me, status);
      await app.session.signOut();
      app.go("#/erased");
    }).catch(app.fail);
  });
  return h(
    "section",
    { class: "card" },
    h("h2", {}, "Your data"),
    h("p", { class: "meta" }, "Take a copy of everything you wrote, or leave for good."),
    h("div", { class: "actions" }, download, ask),
    confirmation,
    status,
  );
}
