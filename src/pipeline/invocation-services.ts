import type { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { ensureStarted } from "./orchestrations";
import type { AppServices } from "../app-services";
import { recordOrchestration } from "../telemetry";
import type { PipelineServices } from "./pipeline-services";

/**
 * What one change feed invocation may use: the app's store and pacing (its host's composition
 * root), orchestrations started through `df.getClient(context)` (the durable client binding the
 * host supplies), and the invocation's log for reports. Every host runs the same code.
 */
export function invocationServices(context: InvocationContext, { store, policy }: AppServices): PipelineServices {
  return {
    store,
    orchestrations: {
      async ensureStarted(name, instanceId, input) {
        const outcome = await ensureStarted(df.getClient(context), name, instanceId, input);
        if (outcome !== "exists") {
          context.log(`orchestration ${instanceId} ${outcome}`);
          recordOrchestration(name, outcome);
        }
        return outcome;
      },
    },
    policy,
    log: (message) => context.warn(message),
  };
}
