import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { measureBacklog } from "../src/pipeline/backlog";
import { appServices } from "./composition-root";

// The backlog, on a timer (BACKLOG_SCHEDULE; each minute in Azure, where a timer runs on one
// instance at a time): each change feed consumer's lag per lease, read from the leases and the
// change feed rather than from the consumers, so a stalled or failing one shows; and the
// orchestrations running too long, from the task hub through the durable client.
app.timer("backlog", {
  schedule: "%BACKLOG_SCHEDULE%",
  extraInputs: [df.input.durableClient()],
  handler: async (_timer: unknown, context: InvocationContext) => measureBacklog(appServices().store, df.getClient(context)),
});
