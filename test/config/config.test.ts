import { describe, expect, it } from "vitest";
import { DEFAULT_AUTH_SCOPE, loadIssuerSettings, loadSettings, loadTuning, resolveSettings, SETTING_DEFAULTS } from "../../src/config";

describe("settings", () => {
  it("reads an identity-based endpoint without a key (Entra ID in Azure)", () => {
    const settings = loadSettings({
      COSMOS__accountEndpoint: "https://acct.documents.azure.com:443/",
      AUTH_ISSUER: "https://issuer",
      AUTH_AUDIENCE: "api://x",
    });
    expect(settings.cosmos).toEqual({ endpoint: "https://acct.documents.azure.com:443/", key: undefined, databaseName: "blog", maxRetryWaitSeconds: 10 });
    expect(loadSettings({ COSMOS_ENDPOINT: "http://x", COSMOS_MAX_RETRY_WAIT_SECONDS: "2" }).cosmos.maxRetryWaitSeconds).toBe(2);
    expect(() => loadSettings({ COSMOS_ENDPOINT: "http://x", COSMOS_MAX_RETRY_WAIT_SECONDS: "-1" })).toThrow(/COSMOS_MAX_RETRY_WAIT_SECONDS/);
    expect(settings.auth).toMatchObject({ issuer: "https://issuer", audience: "api://x", devSecret: undefined });
    expect(settings.softDeleteTtlSeconds).toBe(86_400);
  });

  it("requires the API's scope of an issuer's tokens by default, as the deployment does; empty requires none", () => {
    const issuer = { AUTH_ISSUER: "https://issuer", AUTH_AUDIENCE: "api://x" };
    expect(loadIssuerSettings(issuer).scope).toBe(DEFAULT_AUTH_SCOPE);
    expect(loadIssuerSettings({ ...issuer, AUTH_SCOPE: "Posts.Write" }).scope).toBe("Posts.Write");
    expect(loadIssuerSettings({ ...issuer, AUTH_SCOPE: "" }).scope).toBeUndefined();
    expect(loadIssuerSettings({}).scope).toBeUndefined();
  });

  it("resolves a host's own settings once: what it gives is kept, what it leaves out (or gives as undefined) takes the default", () => {
    const resolved = resolveSettings({ cosmos: { endpoint: "http://x", maxRetryWaitSeconds: undefined }, feedCacheMs: 0, likeBatchMax: undefined });
    expect(resolved).toEqual({
      cosmos: { endpoint: "http://x", key: undefined, databaseName: SETTING_DEFAULTS.databaseName, maxRetryWaitSeconds: SETTING_DEFAULTS.maxRetryWaitSeconds },
      auth: {},
      softDeleteTtlSeconds: SETTING_DEFAULTS.softDeleteTtlSeconds,
      feedRefreshSeconds: SETTING_DEFAULTS.feedRefreshSeconds,
      feedCacheMs: 0,
      likeBatchMax: SETTING_DEFAULTS.likeBatchMax,
    });
    // The environment's defaults are the same ones.
    const fromEnvironment = loadSettings({ COSMOS_ENDPOINT: "http://x" });
    expect({ ...fromEnvironment, auth: {} }).toEqual(resolveSettings({ cosmos: { endpoint: "http://x" } }));
  });

  it("reads the key-based connection string the change feed trigger uses", () => {
    const settings = loadSettings({ COSMOS: "AccountEndpoint=https://localhost:8081/;AccountKey=abc==;" });
    expect(settings.cosmos).toMatchObject({ endpoint: "https://localhost:8081/", key: "abc==" });
  });

  it("reads LIKE_BATCH_MAX (default 50, 1 to 100) for both hosts", () => {
    expect(loadSettings({ COSMOS_ENDPOINT: "http://x" }).likeBatchMax).toBe(50);
    expect(loadSettings({ COSMOS_ENDPOINT: "http://x", LIKE_BATCH_MAX: "1" }).likeBatchMax).toBe(1);
    expect(loadTuning({ LIKE_BATCH_MAX: "20" }).likeBatchMax).toBe(20);
    expect(loadTuning({ LIKE_BATCH_MAX: "100" }).likeBatchMax).toBe(100);
    expect(() => loadTuning({ LIKE_BATCH_MAX: "0" })).toThrow(/LIKE_BATCH_MAX/);
    expect(() => loadTuning({ LIKE_BATCH_MAX: "101" })).toThrow(/LIKE_BATCH_MAX/);
  });

  it("refuses to start without an endpoint or with a short dev secret", () => {
    expect(() => loadSettings({})).toThrow(/COSMOS/);
    expect(() => loadSettings({ COSMOS_ENDPOINT: "http://x", AUTH_DEV_SECRET: "short" })).toThrow(/32 characters/);
    expect(() => loadSettings({ COSMOS_ENDPOINT: "http://x", SOFT_DELETE_TTL_SECONDS: "-5" })).toThrow(/SOFT_DELETE_TTL_SECONDS/);
  });
});
