// The local host's change feed consumer (this package, built by tsc -b) on one container, in a
// process of its own, for the tests that kill it and for the .NET tests that share its lease
// container: it prints each id it is handed, and how many leases it holds, every 200 ms.
// Arguments: endpoint key database container leaseContainer prefix owner.
const { join } = require("node:path");
const { CosmosClient } = require("@azure/cosmos");
const { ChangeFeedPump } = require(join(__dirname, "../../dist/index.js"));

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
