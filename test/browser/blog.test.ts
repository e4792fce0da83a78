import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHost, type HostProcess } from "../../chaos/host";
import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";

/**
 * The web front end in a real browser (Debian's Chromium, driven by playwright-core) against
 * `npm start`, as a person uses it. UPDATE_SCREENSHOTS=1 writes the README's screenshots.
 * Longer than most files for a reason: its flows share one browser and one running system, in
 * order, as one person's visit does (the operations page counts what the flows before it did).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? join(__dirname, "../../docs/screenshots") : join(__dirname, "../../dist/screenshots");

let host: HostProcess;
let browser: Browser;
let page: Page;
let site: string;
/** Every resource the pages asked for that was missing: the API's own 404s are answers, anything else a fault (a favicon, a chunk). */
const missing: string[] = [];

beforeAll(async () => {
  // The backlog timer every 5 s (npm start: 30 s): the operations page's lag table is waited for below.
  host = runHost("npm", ["start", "--silent", "--", "--in-memory"], { FEED_CACHE_MS: "0", BACKLOG_SCHEDULE: "*/5 * * * * *" }, { detached: true });
  site = (await host.ready).url.replace(/\/api$/, "/");
  browser = await chromium.launch({ executablePath: CHROMIUM });
  page = await browser.newPage({ viewport: { width: 390, height: 844 } }); // a phone
  page.on("dialog", (dialog) => void dialog.accept());
  page.on("response", (response) => {
    if (response.status() === 404 && !new URL(response.url()).pathname.startsWith("/api/")) missing.push(response.url());
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (host?.child.pid) process.kill(-host.child.pid, "SIGINT");
  await host?.exited;
});

/** Reloads the current route until `check` holds: Q3/Q6 and renames arrive through the change feed. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await page.waitForTimeout(300);
    await page.reload();
    await page.waitForSelector("main:not(:has(.loading))");
  }
}

async function signInAs(userId: string): Promise<void> {
  const signOut = page.getByRole("button", { name: "Sign out" });
  if (await signOut.isVisible()) await signOut.click();
  await page.getByLabel("user id").fill(userId);
  await page.getByRole("button", { name: "Sign in as" }).click();
  await page.locator("[data-test=signed-in]", { hasText: /Signed in as (@|\w)/ }).waitFor();
}

async function saveProfile(username: string): Promise<void> {
  await page.goto(`${site}#/profile`);
  await page.getByRole("heading", { name: /profile/i }).waitFor();
  await page.locator("input[name=username]").fill(username);
  await page.locator("form.card button[type=submit]").click();
}

/** Writes a post through the editor; returns the URL of its page. */
async function publish(title: string, content: string): Promise<string> {
  await page.getByRole("link", { name: "Write", exact: true }).click();
  await page.locator("input[name=title]").fill(title);
  await page.locator("textarea[name=content]").fill(content);
  await page.getByRole("button", { name: "Publish" }).click();
  await page.getByRole("heading", { name: title }).waitFor();
  return page.url();
}

/**
 * The form controls the current view shows that have no accessible name (no label, wrapping or
 * by `for`, and no aria-label), and the patterns that do not compile under the `v` flag, with
 * which the browser checks `pattern` (an invalid one is skipped, so the field goes unchecked).
 */
async function formFaults(): Promise<string[]> {
  return page.evaluate(() => {
    const faults: string[] = [];
    for (const control of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>("input, textarea, select")) {
      if (control.type === "hidden") continue;
      if (control.labels?.length === 0 && !control.getAttribute("aria-label")) faults.push(`${control.name}: no accessible name`);
      const pattern = control.getAttribute("pattern");
      if (pattern !== null) {
        try {
          new RegExp(`^(?:${pattern})$`, "v");
        } catch {
          faults.push(`${control.name}: pattern invalid under the v flag`);
        }
      }
    }
    return faults;
  });
}

/** The accessibility violations axe-core finds in the current view that are serious or critical. */
async function seriousViolations(): Promise<string[]> {
  // Evaluated through the browser's debugging protocol, as a test tool's script: the page's CSP refuses inline scripts, rightly.
  await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
  return page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(context: Document): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }
    ).axe;
    const { violations } = await axe.run(document);
    return violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => JSON.stringify(node.target)).join(", ")}`);
  });
}

/** A call to the API as `userId`, the way a script would make it (dev token of npm start). */
async function apiAs(userId: string, method: string, path: string, body?: unknown): Promise<Response> {
  const headers = { authorization: `Bearer ${await devToken(userId, LOCAL_DEV_SECRET)}`, "content-type": "application/json" };
  return fetch(`${site}api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

describe("the blog in a browser", () => {
  it("signs in, registers, posts, sees the post in the feed, comments, likes and unlikes, edits, renames and deletes", async () => {
    await page.goto(site);
    await page.getByText("No posts yet.").waitFor();
    // Before a profile: the header says so, and a write sends the person to create one.
    await signInAs("alice");
    await page.locator("[data-test=signed-in]", { hasText: "Signed in as alice (no profile yet)" }).waitFor();
    const noProfile = await apiAs("alice", "POST", "/posts", { title: "t", content: "c" });
    expect(noProfile.status).toBe(403);
    await page.getByRole("link", { name: "Write", exact: true }).click();
    await page.locator("input[name=title]").fill("Too early");
    await page.locator("textarea[name=content]").fill("No profile yet.");
    await page.getByRole("button", { name: "Publish" }).click();
    await page.locator("#notice", { hasText: "You have no profile yet." }).waitFor();
    expect(await page.locator("#notice").textContent()).not.toContain("/api/");
    await page.locator("#notice").getByRole("link", { name: "Create your profile" }).click();
    await saveProfile("alice");
    await page.getByRole("heading", { name: "@alice" }).waitFor();
    await page.locator("#notice", { hasText: "Welcome, @alice" }).waitFor();
    await page.locator("[data-test=signed-in]", { hasText: "Signed in as @alice" }).waitFor();
    await page.getByText("You have not written anything yet").waitFor();

    const postUrl = await publish("Hello from a browser", "Written in Chromium, served by npm start, stored in the embedded Cosmos DB.");

    await page.getByRole("link", { name: "Feed" }).click();
    await eventually(async () => (await page.getByRole("link", { name: "Hello from a browser" }).count()) === 1);

    await page.goto(postUrl);
    await page.locator("textarea[name=comment]").fill("First!");
    await page.getByRole("button", { name: "Comment" }).click();
    await page.locator(".comment", { hasText: "First!" }).waitFor();
    await page.locator("[data-test=comments]", { hasText: "1 comment" }).waitFor();
    await page.locator("[data-test=like]").click();
    await page.getByRole("button", { name: "Unlike" }).waitFor();
    await page.locator("[data-test=likes]", { hasText: "♥ 1 like" }).waitFor();
    await page.getByText("Liked by @alice").waitFor();
    await page.getByRole("button", { name: "Unlike" }).click();
    await page.locator("[data-test=likes]", { hasText: "♥ 0 likes" }).waitFor();
    await page.getByRole("button", { name: "Like", exact: true }).click();
    await page.getByRole("button", { name: "Unlike" }).waitFor();

    // The author edits the post.
    await page.getByRole("button", { name: "Edit" }).click();
    await page.locator("input[name=title]").fill("Hello from a browser");
    await page.locator("textarea[name=content]").fill("Written in Chromium, served by npm start, stored in the embedded Cosmos DB. (Edited.)");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("(edited)").waitFor();
    await page.getByText("(Edited.)").waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "post.png"), fullPage: true });

    // Errors are shown to the person: a taken username is a 409 problem.
    await signInAs("bob");
    await saveProfile("ALICE");
    await page.locator("#notice", { hasText: "Conflict" }).waitFor();
    await saveProfile("bob");
    await page.getByRole("heading", { name: "@bob" }).waitFor();
    await publish("Partitioning, explained", "Every read is one request to one partition.");
    await page.goto(postUrl);
    await page.locator("textarea[name=comment]").fill("Hi from bob");
    await page.getByRole("button", { name: "Comment" }).click();
    await page.locator(".comment", { hasText: "Hi from bob" }).waitFor();

    // A rename reaches the post (the username orchestration) and the comments.
    await signInAs("alice");
    await saveProfile("alice_renamed");
    await page.getByRole("heading", { name: "@alice_renamed" }).waitFor();
    await page.locator("#notice", { hasText: "Your username is now @alice_renamed. Your posts, comments and likes show it within a few seconds." }).waitFor();
    await page.goto(postUrl);
    await eventually(
      async () =>
        (await page.locator("article .meta a", { hasText: "@alice_renamed" }).count()) > 0 &&
        (await page.locator(".comment a", { hasText: "@alice_renamed" }).count()) > 0,
    );
    await page.goto(site);
    await eventually(async () => (await page.locator("[data-post] .meta a", { hasText: "@alice_renamed" }).count()) === 1);
    await page.screenshot({ path: join(SCREENSHOTS, "feed.png"), fullPage: true });
    // Phone-sized: nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    await page.goto(postUrl);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Latest posts" }).waitFor();
    await page.locator("#notice", { hasText: '"Hello from a browser" was deleted' }).waitFor();
    await eventually(async () => (await page.getByRole("link", { name: "Hello from a browser" }).count()) === 0);
    await page.goto(postUrl);
    await page.locator("#notice", { hasText: "Not Found" }).waitFor();
    expect(missing).toEqual([]);
  });

  it("loads the feed 20 posts at a time through the whole feed the API serves, and says where it ends", async () => {
    expect((await apiAs("prolific", "POST", "/users", { username: "prolific" })).status).toBe(201);
    for (let i = 0; i < 105; i++) expect((await apiAs("prolific", "POST", "/posts", { title: `Feed post ${i}`, content: "c" })).status).toBe(201);
    // The feed is filled through the change feed, whose ranges (each post its own partition key)
    // catch up in no set order: wait until it holds exactly the 100 newest, newest first.
    const newest = Array.from({ length: 100 }, (_, i) => `Feed post ${104 - i}`);
    const deadline = Date.now() + 60_000;
    const feedNow = async () => ((await (await fetch(`${site}api/feed?limit=100`)).json()) as { items: { title: string }[] }).items.map((item) => item.title);
    while (JSON.stringify(await feedNow()) !== JSON.stringify(newest)) {
      if (Date.now() > deadline) throw new Error("the feed did not reach 100 posts");
      await page.waitForTimeout(300);
    }
    await page.goto(`${site}#/`);
    const cards = page.locator("main article.card");
    await page.getByRole("heading", { name: "Latest posts" }).waitFor();
    expect(await cards.count()).toBe(20);
    for (let shown = 40; shown <= 100; shown += 20) {
      await page.getByRole("button", { name: "Load more" }).click();
      await expect.poll(() => cards.count()).toBe(shown);
    }
    expect(await page.getByRole("button", { name: "Load more" }).isVisible()).toBe(false);
    expect(await page.locator("[data-test=feed-end]").textContent()).toMatch(/whole feed: the 100 newest posts/);
    // Newest first, each once: the 100 newest of the 105, in order.
    const titles = await page.locator("main article.card h2").allTextContents();
    expect(titles).toEqual(newest);
  });

  it("searches from the header: results with the words marked, Load more, and what to try when nothing is found", async () => {
    expect((await apiAs("searcher", "POST", "/users", { username: "searcher" })).status).toBe(201);
    for (let i = 0; i < 12; i++)
      expect(
        (await apiAs("searcher", "POST", "/posts", { title: `Hot zorblaxes ${i}`, content: `Spread the keys, or one zorblax throttles (${i}).` })).status,
      ).toBe(201);
    await page.goto(`${site}#/`);
    await page.getByRole("searchbox", { name: "Search posts" }).fill("zorblax");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("heading", { name: 'Posts about "zorblax"' }).waitFor();
    const cards = page.locator("main article.card");
    await expect.poll(() => cards.count()).toBe(10);
    // The words found are marked in each snippet, as text.
    expect(await cards.first().locator(".snippet mark").allTextContents()).toEqual(["zorblax"]);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => cards.count()).toBe(12);
    expect(await page.getByRole("button", { name: "Load more" }).isVisible()).toBe(false);
    // The box keeps the words on the results page; a search nothing answers says what to try.
    expect(await page.getByRole("searchbox", { name: "Search posts" }).inputValue()).toBe("zorblax");
    await page.getByRole("searchbox", { name: "Search posts" }).fill("zebra");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText('No post holds "zebra". Try fewer words').waitFor();
  });

  it("has no serious or critical accessibility violations in any view (axe-core), signed out and signed in", async () => {
    await page.goto(site);
    const signOut = page.getByRole("button", { name: "Sign out" });
    if (await signOut.isVisible()) await signOut.click();
    const found: string[] = [];
    const check = async (hash: string, ready: () => Promise<unknown>) => {
      await page.goto(`${site}${hash}`);
      await ready();
      await page.waitForSelector("main:not(:has(.loading))");
      found.push(...(await seriousViolations()).map((violation) => `${hash}: ${violation}`));
    };
    await check("#/", () => page.getByRole("heading", { name: "Latest posts" }).waitFor());
    await check("#/ops", () => page.getByRole("heading", { name: /operations/i }).waitFor());
    await signInAs("axe");
    await saveProfile("axe");
    await page.getByRole("heading", { name: "@axe" }).waitFor();
    const { postId } = (await (await apiAs("axe", "POST", "/posts", { title: "Checked by axe", content: "c" })).json()) as { postId: string };
    await apiAs("axe", "POST", `/posts/${postId}/comments`, { content: "a comment" });
    await check("#/", () => page.getByRole("heading", { name: "Latest posts" }).waitFor());
    await check(`#/posts/${postId}`, () => page.getByRole("heading", { name: "Checked by axe" }).waitFor());
    await check(`#/posts/${postId}/edit`, () => page.locator("input[name=title]").waitFor());
    await check("#/users/axe", () => page.getByRole("heading", { name: "@axe" }).waitFor());
    await check("#/write", () => page.locator("input[name=title]").waitFor());
    await check("#/profile", () => page.getByRole("heading", { name: /profile/i }).waitFor());
    await check("#/search/checked", () => page.getByRole("heading", { name: 'Posts about "checked"' }).waitFor());
    expect(found).toEqual([]);
  });

  it("names every form control, and gives the browser patterns it can check (sign-in, profile, editor, comment)", async () => {
    await page.goto(site);
    const signOut = page.getByRole("button", { name: "Sign out" });
    if (await signOut.isVisible()) await signOut.click();
    await page.getByLabel("user id").waitFor();
    expect(await formFaults()).toEqual([]);
    await signInAs("named");
    await saveProfile("named");
    await page.getByRole("heading", { name: "@named" }).waitFor();
    await page.goto(`${site}#/profile`);
    await page.getByRole("heading", { name: "Your profile" }).waitFor();
    expect(await formFaults()).toEqual([]);
    await page.getByRole("link", { name: "Write", exact: true }).click();
    await page.getByLabel("Title").waitFor();
    expect(await formFaults()).toEqual([]);
    await page.getByLabel("Title").fill("Named fields");
    await page.getByLabel("Content").fill("Every field has a name.");
    await page.getByRole("button", { name: "Publish" }).click();
    await page.getByLabel("Your comment").waitFor();
    expect(await formFaults()).toEqual([]);
    // The sign-in pattern is checked now: an id the API would refuse is refused by the browser first.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("user id").fill("no spaces allowed");
    expect(await page.getByLabel("user id").evaluate((input: HTMLInputElement) => input.validity.patternMismatch)).toBe(true);
  });

  it("downloads my data as one file, and erases my account after a confirmation naming what goes", async () => {
    await page.goto(site);
    await signInAs("carol");
    await saveProfile("carol_leaves");
    await page.getByRole("heading", { name: "@carol_leaves" }).waitFor();
    await publish("Before I go", "A last post.");
    // Her list (Q3) follows the change feed; the confirmation counts what it holds.
    await page.goto(`${site}#/users/carol`);
    await eventually(async () => (await page.getByRole("link", { name: "Before I go" }).count()) === 1);

    await page.goto(`${site}#/profile`);
    const downloading = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download my data" }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe("blog-export-carol.json");
    const exported = JSON.parse(await (await download.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString("utf8")));
    expect(exported).toMatchObject({ format: "blog-export/1", userId: "carol", profile: { username: "carol_leaves" } });
    expect(exported.posts.map((post: { title: string }) => post.title)).toEqual(["Before I go"]);

    await page.getByRole("button", { name: "Delete my account…" }).click();
    const confirmation = page.getByRole("alertdialog", { name: "Erase your account?" });
    await confirmation.getByText("the username @carol_leaves").waitFor();
    await confirmation.getByText("your 1 post, with every comment and like on them").waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "leaving.png"), fullPage: true });
    await page.getByRole("button", { name: "Erase my account" }).click();
    await page.getByRole("heading", { name: "Your account was erased" }).waitFor({ timeout: 60_000 });
    await page.getByRole("button", { name: "Sign in as" }).waitFor();
    expect((await fetch(`${site}api/users/carol`)).status).toBe(404);
    // Signing in again, she is told at once that the account was erased, not offered a profile to create.
    await signInAs("carol");
    await page.goto(`${site}#/profile`);
    await page.getByRole("heading", { name: "Your account was erased" }).waitFor();
    expect(await page.getByRole("button", { name: "Create profile" }).count()).toBe(0);
  });

  it("shows the operations page with live figures: requests per route and method over five minutes, the change feed's lag, orchestrations, readable on a phone", async () => {
    await page.goto(`${site}#/ops`);
    const routes = page.locator("table[data-test=routes]");
    await routes.waitFor();
    // The session above put requests on the API: their routes are listed with what they cost.
    await expect(routes.locator("tr", { hasText: "/api/posts/{postId}/comments" }).count()).resolves.toBeGreaterThan(0);
    const feedRow = routes.locator("tr", { hasText: "GET /api/feed" });
    const before = Number((await feedRow.locator('td[data-label="requests, 5 min"]').innerText()).replace(/,/g, ""));
    // Live: a request made elsewhere counts (requests of the last five minutes) within a refresh or two, without reloading the page.
    await fetch(`${site}api/feed`);
    await page.waitForFunction(
      (count) => {
        const row = [...document.querySelectorAll("table[data-test=routes] tr")].find((tr) => tr.textContent?.includes("GET /api/feed"));
        return Number(row?.querySelector('td[data-label="requests, 5 min"]')?.textContent?.replace(/,/g, "")) > count;
      },
      before,
      { timeout: 15_000 },
    );
    await page.locator("table[data-test=lag]").waitFor();
    await expect(page.locator("[data-test=ru] .tile-value").innerText()).resolves.not.toBe("0.0");
    await page.locator("[data-test=orchestrations]").waitFor();
    // Leases are named by the range they cover (their consumer is the row's first column), every figure by its window.
    await expect(page.locator("table[data-test=lag] td[data-label=lease]").first().innerText()).resolves.toMatch(/^range \d+$/);
    for (const label of await page.locator(".tile .meta").allInnerTexts()) expect(label).toMatch(/last minute|last 5 min|since start/);
    await page.screenshot({ path: join(SCREENSHOTS, "ops.png"), fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // On a desktop, every table is read whole: nothing scrolls sideways at 1280 px.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForTimeout(2500); // a refresh of the figures, drawn at this width
    const overflowing = await page.evaluate(() => [
      ...(document.documentElement.scrollWidth > window.innerWidth ? ["the page"] : []),
      ...[...document.querySelectorAll<HTMLElement>("main table")]
        .filter((table) => table.scrollWidth > table.parentElement!.clientWidth || table.getBoundingClientRect().right > window.innerWidth)
        .map((table) => table.dataset.test ?? "a table"),
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, "ops-desktop.png"), fullPage: true });
    expect(overflowing).toEqual([]);
    await page.goto(site);
    await page.getByRole("heading", { name: "Latest posts" }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "feed-desktop.png") });
    await page.setViewportSize({ width: 390, height: 844 });
  });
});
