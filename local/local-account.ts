import { LOCAL_COSMOS_KEY } from "embedded-cosmos";

/**
 * For the tools run beside `npm start` (dead-letters, rebuild-copies): with no account named in
 * the environment, npm start's embedded Cosmos DB server, at EMBEDDED_COSMOS_PORT (default 8081)
 * with its published key, so the README's commands run as written. Returns the line that says
 * so, or undefined when an account is named.
 */
export function defaultToLocalAccount(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.COSMOS_ENDPOINT?.trim() || env.COSMOS__accountEndpoint?.trim() || env.COSMOS?.trim()) return undefined;
  const endpoint = `http://127.0.0.1:${env.EMBEDDED_COSMOS_PORT?.trim() || 8081}/`;
  env.COSMOS_ENDPOINT = endpoint;
  env.COSMOS_KEY = LOCAL_COSMOS_KEY;
  return `(no COSMOS_ENDPOINT set: using npm start's embedded Cosmos DB server at ${endpoint})`;
}
