// The floor app (app.ts) served by the local host, as `npm start` serves the API: the worker's
// API loads it, the host's HTTP server answers its routes, the OpenTelemetry SDK is installed as
// the host installs it. Prints FLOOR=<api address> when it listens; Ctrl-C or SIGTERM stops it.
import { join } from "node:path";
import { createHttpServer, loadFunctionApp, localTelemetry } from "local-host";

async function main(): Promise<void> {
  const telemetry = localTelemetry();
  const app = await loadFunctionApp(join(__dirname, "app"), {
    settings: (name) => process.env[name],
    durableClient: () => {
      throw new Error("the floor serves no durable client");
    },
    log: () => {},
  });
  const server = createHttpServer(app.http, { log: () => {}, logRequests: false });
  server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    console.log(`FLOOR=http://127.0.0.1:${port}/api`);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      server.close();
      void telemetry.shutdown().then(() => process.exit(0));
    });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
