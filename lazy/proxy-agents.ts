// Stands in for the proxy agents of the Azure SDKs' HTTP client, @typespec/ts-http-runtime
// (lazy/splits.ts). The client imports both packages when it loads, and constructs an agent only
// for a request that goes through a proxy (HTTPS_PROXY, HTTP_PROXY or the SDK's proxyOptions): a
// Function App without a proxy, the usual case, never does.
import type * as Https from "https-proxy-agent";
import type * as Http from "http-proxy-agent";

// `new` on a function that returns an object gives that object: the caller gets the real agent.
export const HttpsProxyAgent = function (...args: ConstructorParameters<typeof Https.HttpsProxyAgent>) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return new (require("https-proxy-agent") as typeof Https).HttpsProxyAgent(...args);
} as unknown as typeof Https.HttpsProxyAgent;

export const HttpProxyAgent = function (...args: ConstructorParameters<typeof Http.HttpProxyAgent>) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return new (require("http-proxy-agent") as typeof Http).HttpProxyAgent(...args);
} as unknown as typeof Http.HttpProxyAgent;
