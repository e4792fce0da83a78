import { ACCOUNT_ERASED, Api, ApiError, PROFILE_REQUIRED } from "./api";
import { anonymousSession, devSession, entraSession, type AuthConfig, type Session } from "./auth";
import { h, loading, show } from "./dom";
import type { App } from "./app";
import { editorView, feedView, postView, profileView, userView } from "./views";
import { searchForm, searchView } from "./search";

/** Written next to the app: by the local host, or at deploy time from the azd environment. */
interface Config {
  apiBase: string;
  auth: AuthConfig;
}

const element = (id: string) => document.getElementById(id)!;

/** A problem from the API, shown as the person needs it: what, why, which field, when to retry. */
function describe(error: unknown): HTMLElement {
  if (!(error instanceof ApiError)) return h("div", {}, h("strong", {}, "Something went wrong. "), error instanceof Error ? error.message : String(error));
  const { problem, retryAfter } = error;
  // The API's words are for programs; these two a person meets, so they get the person's.
  if (problem.type === PROFILE_REQUIRED)
    return h("div", { "data-status": "403" }, h("strong", {}, "You have no profile yet. "), h("a", { href: "#/profile" }, "Create your profile"), " to write.");
  if (problem.type === ACCOUNT_ERASED) return h("div", { "data-status": "403" }, h("strong", {}, "This account was erased. "), "It can no longer write.");
  return h(
    "div",
    { "data-status": String(error.status) },
    h("strong", {}, `${problem.title}. `),
    problem.detail ?? "",
    retryAfter ? ` Try again in ${retryAfter} s.` : "",
    problem.errors?.length ? h("ul", {}, ...problem.errors.map((e) => h("li", {}, `${e.path}: ${e.message}`))) : null,
  );
}

/** What the header says of the signed-in user, read once per user and profile change (not on every page). */
let header: { userId: string; text: Promise<string> } | undefined;

/** Who the header says is signed in: their username once they have a profile, their user id until then. */
function signedInAs(app: App, userId: string): Promise<string> {
  if (header?.userId !== userId) {
    const text = app.api
      .get<{ username: string }>(`/users/${encodeURIComponent(userId)}`)
      .then((user) => `Signed in as @${user.username}`)
      .catch((error: unknown) => {
        // Only "no profile" is kept; anything else (the API out of reach) is asked again next page.
        if (!(error instanceof ApiError && error.status === 404)) header = undefined;
        return `Signed in as ${userId} (no profile yet)`;
      });
    header = { userId, text };
  }
  return header.text;
}

function renderSession(app: App, render: () => void): void {
  const box = element("session");
  const userId = app.session.userId();
  if (userId) {
    const out = h("button", { class: "secondary", onclick: () => void app.session.signOut().then(render) }, "Sign out");
    const who = h("span", { class: "meta", "data-test": "signed-in" }, "Signed in");
    void signedInAs(app, userId).then((text) => (who.textContent = text));
    return show(box, who, out);
  }
  if (app.session.mode === "none") return show(box);
  if (app.session.mode === "entra") return show(box, h("button", { onclick: () => void app.session.signIn().catch(app.fail) }, "Sign in"));
  const input = h("input", {
    name: "userId",
    placeholder: "user id",
    "aria-label": "user id",
    required: true,
    // Escaped as the v flag requires ('|' and '-' in a class): browsers compile patterns with it.
    pattern: "[A-Za-z0-9_.@\\|\\-]{1,128}",
  }) as HTMLInputElement;
  const form = h("form", {}, input, h("button", { type: "submit" }, "Sign in as"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void app.session.signIn(input.value).then(render, app.fail);
  });
  show(box, form);
}

/** Hash routes: #/, #/posts/{id}, #/posts/{id}/edit, #/users/{id}, #/search/{words}, #/write, #/profile, #/erased, #/ops. */
async function route(app: App): Promise<void> {
  const [, first, id, action] = location.hash.replace(/^#/, "").split("/").map(decodeURIComponent);
  if (first === "posts" && id && action === "edit") return editorView(app, id);
  if (first === "posts" && id) return postView(app, id);
  if (first === "users" && id) return userView(app, id);
  if (first === "search" && id) return searchView(app, id);
  if (first === "write") return editorView(app);
  if (first === "profile") return profileView(app);
  if (first === "erased") return (await import("./leaving")).erasedView(app);
  // Loaded only when asked for: most visitors never open it.
  if (first === "ops") return (await import("./ops")).opsView(app);
  return feedView(app);
}

async function start(): Promise<void> {
  const config = (await (await fetch("config.json")).json()) as Config;
  const session: Session = config.auth.mode === "entra" ? await entraSession(config.auth) : config.auth.mode === "dev" ? devSession() : anonymousSession();
  const notice = element("notice");
  /** What the next page shown says happened (app.tell), then forgets. */
  let told: string | undefined;
  const app: App = {
    api: new Api(config.apiBase, () => session.token()),
    session,
    view: element("view"),
    go: (hash) => (location.hash === hash ? void render() : void (location.hash = hash)),
    fail(error) {
      notice.className = "";
      show(notice, describe(error));
      notice.hidden = false;
    },
    tell(message) {
      told = message;
    },
    profileChanged() {
      header = undefined;
    },
  };
  const render = () => {
    notice.hidden = told === undefined;
    notice.className = "info";
    show(notice, told);
    told = undefined;
    renderSession(app, render);
    const signedIn = Boolean(session.userId());
    const [, first, words] = location.hash.replace(/^#/, "").split("/");
    show(element("search"), searchForm(app, first === "search" && words ? decodeURIComponent(words) : ""));
    show(
      element("nav"),
      h("a", { href: "#/" }, "Feed"),
      signedIn && h("a", { href: "#/write" }, "Write"),
      signedIn && h("a", { href: "#/profile" }, "Profile"),
      h("a", { href: "#/ops" }, "Ops"),
    );
    // Each render draws into a container of its own: an older render still awaiting the API
    // then writes into a detached one instead of over the page the person is on now.
    const view = h("div", {}, loading());
    show(element("view"), view);
    const page = { ...app, view };
    route(page).catch((error: unknown) => {
      show(view, h("p", { class: "meta" }, "This page could not be shown."));
      app.fail(error);
    });
  };
  window.addEventListener("hashchange", render);
  render();
}

void start();
