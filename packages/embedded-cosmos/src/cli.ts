import { parseArgs } from "node:util";
import { parseFaultSpec } from "./limits/faults";
import { startCosmos } from "./index";
import { commaList } from "./protocol/host-names";

/** `npm run cosmos -- --port 8081`: serves the embedded Cosmos DB-compatible server until stopped. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "8081" },
      host: { type: "string", default: "127.0.0.1" },
      "script-operation-limit": { type: "string" },
      "script-timeout-ms": { type: "string" },
      "data-dir": { type: "string" },
      partitions: { type: "string", default: "4" },
      "operations-per-second": { type: "string" },
      faults: { type: "string" },
      "recover-data": { type: "boolean", default: false },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0-65535, got '${values.port}'`);
  const cosmos = await startCosmos({
    port,
    host: values.host,
    scriptOperationLimit: values["script-operation-limit"] ? Number(values["script-operation-limit"]) : undefined,
    scriptTimeoutMs: values["script-timeout-ms"] ? Number(values["script-timeout-ms"]) : undefined,
    dataDir: values["data-dir"],
    partitions: Number(values.partitions),
    operationsPerSecond: values["operations-per-second"] ? Number(values["operations-per-second"]) : undefined,
    faults: values.faults === undefined ? undefined : parseFaultSpec(values.faults),
    recoverDamagedData: values["recover-data"],
    allowedHosts: commaList(process.env.LOCAL_ALLOWED_HOSTS),
  });
  console.log(`Embedded Cosmos DB listening (${values["data-dir"] ? `data in ${values["data-dir"]}, kept across restarts` : "data in memory, lost on exit"})`);
  if (values.faults !== undefined) console.log(`  injecting faults: ${values.faults}`);
  console.log(`  COSMOS_ENDPOINT=${cosmos.endpoint}`);
  console.log(`  COSMOS_KEY=${cosmos.key}`);
  console.log(`@azure/cosmos: new CosmosClient({ endpoint, key, connectionPolicy: { enableEndpointDiscovery: false } })`);
  const stop = () => void cosmos.stop().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error((error as Error).message);
  process.exit(1);
});
