/** How people sign in: dev tokens from the local host, or Entra ID (MSAL) in Azure. */
export type AuthConfig =
  | { mode: "dev" }
  | { mode: "none" }
  /** MSAL sign-in: Entra ID, or (`protocol: "oidc"`) any OpenID Connect provider as the authority. */
  | { mode: "entra"; clientId: string; authority: string; scope: string; protocol?: "oidc" };

export interface Session {
  readonly mode: AuthConfig["mode"];
  /** The signed-in user's id (the token's `sub`), if any. */
  userId(): string | undefined;
  token(): Promise<string | undefined>;
  /** Dev mode signs in as `userId`; Entra ID redirects to the sign-in page. */
  signIn(userId?: string): Promise<void>;
  signOut(): Promise<void>;
}

const STORAGE_KEY = "blog.devSession";

/** No sign-in configured: the front end is read-only. */
export function anonymousSession(): Session {
  return { mode: "none", userId: () => undefined, token: async () => undefined, signIn: async () => {}, signOut: async () => {} };
}

/** Local only: the local host signs a dev token for any user id (as `npm run token` does). */
export function devSession(): Session {
  let current = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as { userId: string; token: string } | null;
  return {
    mode: "dev",
    userId: () => current?.userId,
    token: async () => current?.token,
    async signIn(userId) {
      const response = await fetch("/local/dev-token", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ userId }) });
      if (!response.ok) throw new Error(((await response.json()) as { detail?: string }).detail ?? "Signing in failed.");
      current = { userId: userId!, token: ((await response.json()) as { token: string }).token };
      localStorage.setItem(STORAGE_KEY, JSON.stringify(current));
    },
    async signOut() {
      current = null;
      localStorage.removeItem(STORAGE_KEY);
    },
  };
}

/** The `sub` of a JWT: the API's user id is the access token's subject. */
const subjectOf = (token: string) => (JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))) as { sub: string }).sub;

/** Entra ID through MSAL (loaded only in this mode): redirect sign-in, access tokens for the API's scope. */
export async function entraSession(config: Extract<AuthConfig, { mode: "entra" }>): Promise<Session> {
  const msal = await import("@azure/msal-browser");
  const oidc = config.protocol === "oidc";
  const client = await msal.createStandardPublicClientApplication({
    auth: {
      clientId: config.clientId,
      authority: config.authority,
      redirectUri: location.origin + location.pathname,
      // Another OpenID Connect provider: trusted by its host, its endpoints from its own discovery
      // document. offline_access is not asked for: a provider that follows OpenID Connect grants it
      // only with a consent prompt, and then refuses every renewal that names it.
      ...(oidc ? { knownAuthorities: [new URL(config.authority).host], OIDCOptions: { defaultScopes: ["openid", "profile"] } } : {}),
    },
    ...(oidc ? { system: { protocolMode: msal.ProtocolMode.OIDC } } : {}),
  });
  await client.handleRedirectPromise();
  const account = () => client.getActiveAccount() ?? client.getAllAccounts()[0] ?? null;
  let subject: string | undefined;
  const token = async () => {
    const signedIn = account();
    if (!signedIn) return undefined;
    try {
      // Renewal without a hidden frame: the cached access token, else the refresh token. This page
      // forbids being framed (frame-ancestors 'none'), so MSAL's frame renewal could only time out.
      const { accessToken } = await client.acquireTokenSilent({
        account: signedIn,
        scopes: [config.scope],
        cacheLookupPolicy: msal.CacheLookupPolicy.AccessTokenAndRefreshToken,
      });
      subject = subjectOf(accessToken);
      return accessToken;
    } catch (error) {
      // Whatever failed (a single-page app's refresh token lives 24 hours): sign in again by a
      // full-page redirect rather than leave a page whose every write fails.
      await client.acquireTokenRedirect({ account: signedIn, scopes: [config.scope] });
      throw error;
    }
  };
  await token().catch(() => undefined);
  return {
    mode: "entra",
    userId: () => (account() ? subject : undefined),
    token,
    signIn: () => client.loginRedirect({ scopes: [config.scope] }),
    signOut: () => client.logoutRedirect(),
  };
}
