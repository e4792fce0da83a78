// The local host's change feed consumer (packages/local-host, built by tsc -b) on one
// container, for the .NET tests: it prints each id it is handed, and its leases when asked.
// Arguments: endpoint key database container leaseContainer prefix owner.
const { join } = require("node:path");
const root = join(__dirname, "../..");
const { CosmosClient } = require(join(root, "node_modules/@azure/cosmos"));
const { ChangeFeedPump } = require(join(root, "packages/local-host/dist/index.js"));

const [endpoint, key, database, container, leaseContainer, prefix, owner] = process.argv.slice(2);
const client = new CosmosClient({ endpoint, key, connectionPolicy: { enableEndpointDiscovery: false } });
const db = client.database(database);
const trigger = {
  name: "localConsumer",
  leaseContainerPrefix: prefix,
  startFromBeginning: true,
  retry: { minimumIntervalMs: 100, maximumIntervalMs: 1000, maxRetryCount: -1 },
  invoke: async (documents) => {
    for (const document of documents) console.log(`delivered ${document.id}`);
  },
};
const pump = new ChangeFeedPump(db.container(container), db.container(leaseContainer), trigger, {
  pollMs: 50,
  maxItems: 100,
  owner,
  accountHost: new URL(endpoint).hostname,
  leases: { expirationMs: 5000, renewMs: 1000, acquireMs: 200 },
  log: (line) => console.log(`log ${line}`),
});
pump.start();
setInterval(() => console.log(`owns ${pump.ownedLeases().length}`), 200);
process.on("SIGTERM", () => pump.stop().then(() => process.exit(0)));
