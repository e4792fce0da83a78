// azd hook (postprovision): writes local.settings.json from `azd env get-values`, as Azure's
// Functions templates do, so that `npm run func` (func start) runs at once against the account
// just provisioned, signed in as you (`azd auth login` or `az login`): the template gives your
// principal Cosmos DB's data-plane role, as it gives the app's identity. What it writes are the
// settings provisioning decides (the account, the database, the token settings); every other value
// already in the file, yours, stays. Plain JavaScript with no dependencies, so it runs before
// anything is installed. `--help` says what it does; it never fails provisioning.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const FILE = "local.settings.json";

/** Each setting of the app (local.settings.json Values) and the azd environment value it is taken from. */
const FROM_AZD = {
  COSMOS__accountEndpoint: "COSMOS_ENDPOINT",
  COSMOS_DATABASE: "COSMOS_DATABASE",
  AUTH_ISSUER: "AUTH_ISSUER",
  AUTH_AUDIENCE: "AUTH_AUDIENCE",
  AUTH_SCOPE: "AUTH_SCOPE",
  AUTH_APP_ROLES: "AUTH_APP_ROLES",
  AUTH_ADMIN_ROLES: "AUTH_ADMIN_ROLES",
  SOFT_DELETE_TTL_SECONDS: "SOFT_DELETE_TTL_SECONDS",
};

/** What a fresh file starts from: the Functions host's worker and Azurite for its storage (npm run func starts it). */
const BASE = { FUNCTIONS_WORKER_RUNTIME: "node", AzureWebJobsStorage: "UseDevelopmentStorage=true" };

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Writes ${FILE} from the azd environment (azd env get-values) after azd provision.

usage: node scripts/write-local-settings.mjs

It sets ${Object.keys(FROM_AZD).join(", ")} from the environment's
${Object.values(FROM_AZD).join(", ")}, and keeps every other value the file has.
Then: npm run func (or COSMOS__accountEndpoint=<endpoint> npm start) runs against the account as you.`);
  process.exit(0);
}

/** The azd environment's values: JSON, or the dotenv lines (KEY="value") older azd versions print. */
function azdValues() {
  const output = execFileSync("azd", ["env", "get-values", "--output", "json"], { encoding: "utf8", shell: process.platform === "win32" });
  try {
    return JSON.parse(output);
  } catch {
    const values = {};
    for (const line of output.split(/\r?\n/)) {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)="?(.*?)"?$/.exec(line.trim());
      if (match) values[match[1]] = match[2].replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    return values;
  }
}

try {
  const azd = azdValues();
  if (!azd.COSMOS_ENDPOINT) throw new Error("the azd environment has no COSMOS_ENDPOINT: provision first (azd provision)");
  const file = existsSync(FILE) ? JSON.parse(readFileSync(FILE, "utf8")) : { IsEncrypted: false, Values: {} };
  const written = Object.fromEntries(Object.entries(FROM_AZD).flatMap(([setting, name]) => (azd[name] === undefined ? [] : [[setting, String(azd[name])]])));
  file.Values = { ...BASE, ...file.Values, ...written };
  writeFileSync(FILE, `${JSON.stringify(file, null, 2)}\n`);
  console.log(`${FILE}: ${Object.keys(written).join(", ")} from the azd environment; Cosmos DB ${azd.COSMOS_ENDPOINT}, as you (npm run func)`);
} catch (error) {
  console.warn(`${FILE} was not written (${error.message}); npm run func uses the embedded server until it names an account`);
}
