import { loadSettings } from "../src/config";
import { commandLine, defineCommand } from "../local/command-line";
import { createCosmosClient } from "../src/store/client";
import { provision } from "../src/store/provision";

/**
 * `npm run provision`: creates the database, containers, stored procedures and trigger from
 * infra/containers.json on the account in the settings (emulator, or an account where you may
 * manage resources). In Azure, Bicep does this and the app's identity cannot.
 */
const COMMAND = defineCommand({
  name: "npm run provision",
  summary:
    "Creates the database, containers, stored procedures and post-trigger on the account of COSMOS_ENDPOINT (with COSMOS_KEY) or COSMOS__accountEndpoint, as npm start does for the embedded server.",
  flags: {},
  examples: ["COSMOS_ENDPOINT=https://localhost:8081 COSMOS_KEY=... npm run provision"],
});

async function main(): Promise<void> {
  commandLine(COMMAND);
  const settings = loadSettings();
  const client = createCosmosClient(settings.cosmos);
  await provision(client, settings.cosmos.databaseName, (line) => console.log(line));
  console.log(`database ${settings.cosmos.databaseName} provisioned on ${settings.cosmos.endpoint}`);
  client.dispose();
}

main().catch((error: unknown) => {
  console.error(`provision failed: ${(error as Error).message}`);
  process.exit(1);
});
