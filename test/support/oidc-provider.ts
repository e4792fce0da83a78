import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { certificate } from "./certificate";

export interface OidcProvider {
  /** The issuer, over HTTPS (MSAL accepts no other authority). */
  issuer: string;
  /** Its signing keys over plain HTTP on loopback, for the API (which need not trust the test's certificate). */
  jwksUri: string;
  stop(): Promise<void>;
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

/**
 * `oidc-provider` (a certified OpenID Connect provider) for one single-page app: authorization
 * code with PKCE, refresh tokens, JWT access tokens for one API (RFC 9068, `scope` claim), its own
 * sign-in and consent pages (any user name signs in), and the lifetimes a test asks for.
 */
export async function startOidcProvider(options: {
  clientId: string;
  redirectUri: string;
  audience: string;
  scope: string;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
}): Promise<OidcProvider> {
  const https = createHttpsServer(certificate());
  const http = createHttpServer();
  const [securePort, plainPort] = await Promise.all([listen(https), listen(http)]);
  const issuer = `https://localhost:${securePort}`;
  const resource = {
    scope: options.scope,
    audience: options.audience,
    accessTokenFormat: "jwt" as const,
    accessTokenTTL: options.accessTokenSeconds,
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        application_type: "web",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: [options.redirectUri],
        post_logout_redirect_uris: [options.redirectUri],
      },
    ],
    scopes: ["openid", "profile", "offline_access", options.scope],
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => resource,
      },
    },
    ttl: { AccessToken: options.accessTokenSeconds, RefreshToken: options.refreshTokenSeconds, IdToken: 3600, Session: 3600, Grant: 3600, Interaction: 600 },
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    clientBasedCORS: () => true,
    cookies: { keys: ["a test-only key, never a secret"] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, name: sub }) }),
    // What the user consents to once, on the provider's page, is the app's whole request: its
    // scope, and offline_access for the refresh token (MSAL asks for it on every renewal).
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (!grantId) return undefined;
      const grant = await ctx.oidc.provider.Grant.find(grantId);
      if (!grant) return undefined;
      grant.addOIDCScope(`openid profile offline_access ${options.scope}`);
      grant.addResourceScope(options.audience, options.scope);
      await grant.save();
      return grant;
    },
  });
  https.on("request", provider.callback());
  http.on("request", provider.callback());
  return {
    issuer,
    jwksUri: `http://127.0.0.1:${plainPort}/jwks`,
    async stop() {
      https.closeAllConnections();
      http.closeAllConnections();
      await Promise.all([new Promise((r) => https.close(r)), new Promise((r) => http.close(r))]);
    },
  };
}
