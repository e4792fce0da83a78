import { loadSettings } from "../src/config";
import { createCosmosClient } from "../src/store/client";
import { provision } from "../src/store/provision";

/**
 * `npm run provision`: creates the database, containers, stored procedures and trigger from
 * infra/containers.json on the account in the settings (emulator, or an account where you may
 * manage resources). In Azure, Bicep does this and the app's identity cannot.
 */
async function main(): Promise<void> {
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
