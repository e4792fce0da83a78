import type { PipelinePolicy } from "./pipeline/policy";
import type { BlogStore } from "./store/client";

/**
 * What the app's functions work with, built once per host by its composition root
 * (functions/index.ts under the Functions host, local/system.ts under npm start) and handed to
 * the route table, the change feed consumers, the activities and the backlog timer. Nothing
 * under src/ makes a client or reads configuration on its own.
 */
export interface AppServices {
  /** The Cosmos DB containers and the settings they were opened with. */
  store: BlogStore;
  /** Overrides of the orchestrations' pacing (tests make it quick); the defaults where absent. */
  policy?: Partial<PipelinePolicy>;
}
