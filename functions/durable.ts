import * as df from "durable-functions";
import { activities, entities, orchestrations } from "../src/pipeline/orchestrations";
import { appServices } from "./composition-root";

// Every orchestration and activity of the shared table (src/pipeline/orchestrations.ts).
for (const [name, handler] of Object.entries(orchestrations)) df.app.orchestration(name, handler);
for (const [name, handler] of Object.entries(activities)) df.app.activity(name, { handler: (input: unknown) => handler(appServices().store, input as never) });
for (const [name, handler] of Object.entries(entities)) df.app.entity(name, handler);
