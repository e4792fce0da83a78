// The proxy agents as the bundle gives them to the Azure SDKs' HTTP client,
// @typespec/ts-http-runtime (scripts/bundle.ts points `https-proxy-agent` and `http-proxy-agent`
// here). The client imports both when it loads, and constructs one only for a request that goes
// through a proxy (HTTPS_PROXY, HTTP_PROXY or the SDK's proxyOptions): a Function App without a
// proxy, the usual case, never does. The packages, with `agent-base`, `debug` and its terminal
// colour check, are bundled apart (dist/deploy/proxy-agents.js) and read when the first agent is
// made; loading them was about 6 ms of every cold start.
import type * as Agents from "./proxy-agents";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const agents = () => require("./proxy-agents") as typeof Agents;

// `new` on a function that returns an object gives that object: the caller gets the real agent.
export const HttpsProxyAgent = function (...args: ConstructorParameters<typeof Agents.HttpsProxyAgent>) {
  return new (agents().HttpsProxyAgent)(...args);
} as unknown as typeof Agents.HttpsProxyAgent;

export const HttpProxyAgent = function (...args: ConstructorParameters<typeof Agents.HttpProxyAgent>) {
  return new (agents().HttpProxyAgent)(...args);
} as unknown as typeof Agents.HttpProxyAgent;
