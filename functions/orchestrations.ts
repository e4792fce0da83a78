import * as df from "durable-functions";
import { activities, orchestrations } from "../src/pipeline/orchestrations";

// Every orchestration and activity of the shared table (src/pipeline/orchestrations.ts).
for (const [name, handler] of Object.entries(orchestrations)) df.app.orchestration(name, handler);
for (const [name, handler] of Object.entries(activities)) df.app.activity(name, { handler: (input: unknown) => handler(input as never) });
