import { parseArgs } from "node:util";
import { parseFaultSpec } from "./limits/faults";
import { startCosmos } from "./index";
import { commaList } from "./protocol/host-names";

const USAGE = `Serves the embedded Cosmos DB-compatible server until stopped (Ctrl-C), and prints its endpoint and key.

usage: npm run cosmos -- [flags]

flags:
  --port <port>                    the port, 0 for a free one (default: 8081)
  --host <host>                    the address it listens on (default: 127.0.0.1)
  --data-dir <dir>                 keep the data there across restarts (default: in memory)
  --partitions <n>                 physical partitions (partition key ranges) per container, 1-64 (default: 4)
  --script-operation-limit <n>     collection calls a stored procedure may make before isAccepted is false (default: 5000)
  --script-timeout-ms <ms>         a stored procedure's time limit (default: 5000)
  --operations-per-second <n>      throughput per physical partition; over it, 429 (default: unlimited)
  --faults <spec>                  inject faults, e.g. 429:0.05@write,latency=200:0.1@read
  --recover-data                   load a damaged data directory up to the damage, keeping the rest aside
  --help                           this text

examples:
  npm run cosmos
  npm run cosmos -- --port 0 --data-dir .cosmos --partitions 8`;

const OPTIONS = {
  port: { type: "string", default: "8081" },
  host: { type: "string", default: "127.0.0.1" },
  "script-operation-limit": { type: "string" },
  "script-timeout-ms": { type: "string" },
  "data-dir": { type: "string" },
  partitions: { type: "string", default: "4" },
  "operations-per-second": { type: "string" },
  faults: { type: "string" },
  "recover-data": { type: "boolean", default: false },
} as const;

/** The command line: `--help` prints the usage; a flag the server has not is refused with it (exit 2). */
function commandLine() {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options: OPTIONS }).values;
  } catch (error) {
    console.error(`npm run cosmos: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

/** `npm run cosmos -- --port 8081`: serves the embedded Cosmos DB-compatible server until stopped. */
async function main(): Promise<void> {
  const values = commandLine();
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`npm run cosmos: --port must be 0-65535, got '${values.port}'\n\n${USAGE}`);
    process.exit(2);
  }
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
