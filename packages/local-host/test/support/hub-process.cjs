// A durable host (this package, built by tsc -b) on one task hub of the embedded account, in a
// process of its own, for the test that kills it mid-episode: it runs the orchestration `steps`
// (n activities `step`, their sum), prints each step it takes, and how many partitions it holds.
// Arguments: endpoint key database hub owner.
const { join } = require("node:path");
const { CosmosClient } = require("@azure/cosmos");
const { InvocationContext } = require("@azure/functions");
const { Orchestrator } = require("durable-functions/lib/src/orchestrations/Orchestrator");
const { DurableHost } = require(join(__dirname, "../../dist/index.js"));

const [endpoint, key, database, hub, owner] = process.argv.slice(2);
const client = new CosmosClient({ endpoint, key, connectionPolicy: { enableEndpointDiscovery: false } });

function* steps(context) {
  const n = context.df.getInput();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += yield context.df.callActivity("step", [context.df.instanceId, i]);
  return sum;
}
const contextOf = (functionName) => new InvocationContext({ functionName, logHandler: () => {} });
const wire = (value) => JSON.stringify(value ?? null);
const functions = {
  orchestrations: new Map([["steps", async (trigger) => wire(await new Orchestrator(steps).handle(JSON.parse(wire(trigger)), contextOf("steps")))]]),
  activities: new Map([
    [
      "step",
      async ([instanceId, i]) => {
        console.log(`step ${instanceId} ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return wire(i);
      },
    ],
  ]),
  entities: new Map(),
};
const host = new DurableHost({
  functions,
  hub: { database: client.database(database), name: hub, owner, timing: { expirationMs: 1500, renewMs: 300, acquireMs: 200, pollMs: 50, idlePollMs: 200 } },
});
host.resume().then(() => setInterval(() => console.log(`holds ${host.partitions().length}`), 100));
