import * as df from "durable-functions";
import { ACTIVITIES, findStalePartitions, PROPAGATION, propagateUsername, renameInPartition } from "../src/pipeline/username-propagation";

df.app.orchestration(PROPAGATION, propagateUsername);
df.app.activity(ACTIVITIES.findStalePartitions, { handler: (input) => findStalePartitions(input as Parameters<typeof findStalePartitions>[0]) });
df.app.activity(ACTIVITIES.renameInPartition, { handler: (input) => renameInPartition(input as Parameters<typeof renameInPartition>[0]) });
