import type { BlogStore } from "../store/client";
import type { PipelinePolicy } from "./policy";

/** Starts an orchestration instance unless it runs or has completed (see ensureStarted). */
export interface OrchestrationStarter {
  ensureStarted(name: string, instanceId: string, input: unknown): Promise<unknown>;
}

/** What a change feed handler may use besides the documents: supplied by each host. */
export interface PipelineServices {
  /** The store the consumers work on, from the host's composition root. */
  store: BlogStore;
  orchestrations: OrchestrationStarter;
  /** Overrides of the orchestrations' pacing (the local host's options; Azure uses the defaults). */
  policy?: Partial<PipelinePolicy>;
  /** Where a consumer reports what it set aside (the invocation's log in Azure). */
  log?: (message: string) => void;
}
