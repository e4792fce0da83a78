// The HTTP proxy agents of the Azure SDKs' HTTP client, bundled into a file of their own
// (dist/deploy/proxy-agents.js): what functions/proxy-agents-on-demand.ts loads when a request
// first goes through a proxy.
export { HttpsProxyAgent } from "https-proxy-agent";
export { HttpProxyAgent } from "http-proxy-agent";
