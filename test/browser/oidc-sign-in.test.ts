import { createServer, type AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHost, type HostProcess } from "../../chaos/host";
import { startOidcProvider, type OidcProvider } from "../support/oidc-provider";

/**
 * The front end's real MSAL code against a certified OpenID Connect provider (oidc-provider),
 * in Chromium, with the API validating the provider's tokens by issuer, audience and JWKS:
 * sign in, write, the access token expires and is renewed silently, the refresh token expires
 * and the app signs in again by itself, writing works again, sign out refuses writes.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ACCESS_TOKEN_SECONDS = 8;
const REFRESH_TOKEN_SECONDS = 20;
let SITE: string;
const AUDIENCE = "api://blog-test";
const SCOPE = "access_as_user";

let provider: OidcProvider;
let host: HostProcess;
let browser: Browser;
let page: Page;

/** A port free now, for the host: the provider must know the app's address before the host starts. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  const port = await freePort();
  SITE = `http://localhost:${port}/`;
  provider = await startOidcProvider({
    clientId: "blog-web",
    redirectUri: SITE,
    audience: AUDIENCE,
    scope: SCOPE,
    accessTokenSeconds: ACCESS_TOKEN_SECONDS,
    refreshTokenSeconds: REFRESH_TOKEN_SECONDS,
  });
  host = runHost(
    "npm",
    ["start", "--silent", "--", "--in-memory"],
    {
      PORT: String(port),
      WEB_AUTH_CLIENT_ID: "blog-web",
      WEB_AUTH_AUTHORITY: provider.issuer,
      WEB_API_SCOPE: SCOPE,
      WEB_AUTH_PROTOCOL: "oidc",
      AUTH_ISSUER: provider.issuer,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_JWKS_URI: provider.jwksUri,
      AUTH_SCOPE: SCOPE,
    },
    { detached: true },
  );
  await host.ready;
  browser = await chromium.launch({ executablePath: CHROMIUM });
  // The provider's certificate is the test's own.
  page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
});

afterAll(async () => {
  await browser?.close();
  if (host?.child.pid) process.kill(-host.child.pid, "SIGINT");
  await host?.exited;
  await provider?.stop();
});

/** Signs in on the provider's own pages (its development sign-in: any user name), and consents to the app's scope. */
async function signInAtProvider(user: string): Promise<void> {
  await page.locator("input[name=login]").waitFor();
  await page.locator("input[name=login]").fill(user);
  await page.locator("input[name=password]").fill("any");
  await page.locator("button[type=submit]").click();
  await page.getByRole("button", { name: "Continue" }).click();
}

/** Saves the profile's username through the page; resolves with what the page then says. */
async function saveProfile(username: string): Promise<string> {
  await page.goto(`${SITE}#/profile`);
  await page.locator("input[name=username]").waitFor();
  await page.locator("input[name=username]").fill(username);
  await page.locator("form.card button[type=submit]").click();
  await page.waitForTimeout(1000);
  return (await page.locator("main").innerText()) ?? "";
}

describe("sign-in with an OpenID Connect provider, in a browser", () => {
  it("signs in, writes, renews silently, signs in again after the refresh token expires, and signs out", async () => {
    // Each time the page goes to the provider's authorization endpoint: a silent renewal never does (it posts to /token).
    let toProvider = 0;
    page.on("request", (request) => {
      if (request.isNavigationRequest() && request.url().startsWith(`${provider.issuer}/auth`)) toProvider++;
    });
    await page.goto(SITE);
    await page.getByRole("button", { name: "Sign in" }).click();
    await signInAtProvider("oidc-user");
    await page.locator("[data-test=signed-in]", { hasText: "Signed in as oidc-user (no profile yet)" }).waitFor({ timeout: 30_000 });

    // A write with the access token as issued.
    await saveProfile("oidcuser");
    const me = async () => (await fetch(`${SITE}api/users/oidc-user`)).json() as Promise<{ username?: string }>;
    await expect.poll(async () => (await me()).username, { timeout: 10_000 }).toBe("oidcuser");

    // The access token expires: the next write renews it silently with the refresh token.
    await page.waitForTimeout((ACCESS_TOKEN_SECONDS + 2) * 1000);
    const before = toProvider;
    await saveProfile("oidcuser2");
    await expect.poll(async () => (await me()).username, { timeout: 10_000 }).toBe("oidcuser2");
    expect(toProvider).toBe(before);

    // The refresh token expires too: the app goes back to the provider by itself (its session still
    // open: no page to fill) and comes back signed in; writing works again.
    await page.waitForTimeout((REFRESH_TOKEN_SECONDS + 2) * 1000);
    // The page may leave for the provider while it loads: wait for no load event, only for its return.
    await page.goto(SITE, { waitUntil: "commit" }).catch(() => undefined);
    // The header names the profile now: its username, read without the token.
    await page.locator("[data-test=signed-in]", { hasText: "Signed in as @oidcuser2" }).waitFor({ timeout: 30_000 });
    expect(toProvider).toBeGreaterThan(before);
    expect(await page.locator("input[name=login]").count()).toBe(0);
    await saveProfile("oidcuser3");
    await expect.poll(async () => (await me()).username, { timeout: 10_000 }).toBe("oidcuser3");

    // Signed out: the page offers sign-in again, and writes are refused.
    await page.goto(SITE);
    await page.getByRole("button", { name: "Sign out" }).click();
    // The provider's own sign-out page asks to confirm: its session ends too.
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    await page.locator("button[name=logout][value=yes]").click();
    await page.waitForLoadState();
    await page.goto(SITE);
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 30_000 });
    await page.goto(`${SITE}#/profile`);
    await page.getByText("Sign in to edit your profile.").waitFor();
  });
});
