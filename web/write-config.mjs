// azd hook (service "web", prepackage): writes web/config.json and web/staticwebapp.config.json,
// which the build copies next to the app, from the environment azd provisioned: where the API is,
// how people sign in, and the security headers Static Web Apps sends (the Content-Security-Policy
// names the API's origin, known only after provision).
// Plain JavaScript with no dependencies, so it runs before anything is installed or built.
import { writeFileSync } from "node:fs";

const env = (name) => process.env[name]?.trim() || undefined;
const apiBase = env("API_BASE_URL");
if (!apiBase) {
  console.error("API_BASE_URL is not set: run azd provision first (it is an output of infra/main.bicep)");
  process.exit(1);
}
const [clientId, authority, scope] = [env("WEB_AUTH_CLIENT_ID"), env("WEB_AUTH_AUTHORITY"), env("WEB_API_SCOPE")];
// Without an app registration for the front end, it is read-only: no sign-in in Azure.
const auth = clientId && authority && scope ? { mode: "entra", clientId, authority, scope } : { mode: "none" };
const file = new URL("config.json", import.meta.url);
writeFileSync(file, `${JSON.stringify({ apiBase, auth }, null, 2)}\n`);

// The same policy npm start sends (packages/local-host/src/web.ts), with the API's and the sign-in authority's origins.
const origin = (url) => new URL(url).origin;
const signIn = auth.mode === "entra" ? ` ${origin(auth.authority)}` : "";
const policy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  `connect-src 'self' ${origin(apiBase)}${signIn}`,
  `frame-src ${signIn ? signIn.trim() : "'none'"}`,
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");
const headers = {
  "content-security-policy": policy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "strict-origin-when-cross-origin",
};
writeFileSync(new URL("staticwebapp.config.json", import.meta.url), `${JSON.stringify({ globalHeaders: headers }, null, 2)}\n`);
console.log(
  `wrote ${file.pathname}: API at ${apiBase}, sign-in ${auth.mode === "entra" ? "with Entra ID" : "off (set AUTH_WEB_CLIENT_ID and AUTH_API_SCOPE)"}`,
);
