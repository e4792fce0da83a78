import { ROOT_CONTEXT, SpanKind, trace, type Context, type Link } from "@opentelemetry/api";
import type { OrchestrationContext, OrchestrationHandler } from "durable-functions";
import { ATTRIBUTES, inSpan, recordChangeFeedItems, recordOrchestration, traceOriginOf } from "../telemetry";
import type { PipelineServices } from "./pipeline-services";
import type { BlogStore } from "../store/client";
import { inBackground } from "../store/priority";

/**
 * The pipeline's functions as both hosts register them, observed the same way everywhere: a
 * span per change feed batch and per activity execution, and the orchestration outcomes. Their
 * Cosmos DB requests are the background's: low priority (store/priority.ts).
 */

/** An orchestrator whose outcome is counted once: when it returns or throws for real, never on a replay. */
export function observedOrchestrator(name: string, orchestrator: OrchestrationHandler): OrchestrationHandler {
  return function* (context: OrchestrationContext) {
    // Continuing as new is neither an end nor a failure: the instance goes on.
    let continued = false;
    const continueAsNew = context.df.continueAsNew.bind(context.df);
    context.df.continueAsNew = (input: unknown) => {
      continued = true;
      continueAsNew(input);
    };
    try {
      const output: unknown = yield* orchestrator(context);
      if (!context.df.isReplaying && !continued) recordOrchestration(name, "completed");
      return output;
    } catch (error) {
      if (!context.df.isReplaying) recordOrchestration(name, "failed");
      throw error;
    }
  };
}

/** An activity run in a span of its own, in the background; a failed attempt counts as a retry of its orchestration's step. */
export function observedActivity<I, O>(name: string, activity: (store: BlogStore, input: I) => Promise<O>): (store: BlogStore, input: I) => Promise<O> {
  return (store, input) =>
    inBackground(() =>
      inSpan(`activity ${name}`, { kind: SpanKind.INTERNAL, attributes: { [ATTRIBUTES.activity]: name } }, async () => {
        try {
          return await activity(store, input);
        } catch (error) {
          recordOrchestration(name, "retrying");
          throw error;
        }
      }),
    );
}

/** How long the oldest change of a batch has waited since Cosmos DB took it (its `_ts`), in seconds. */
function batchLagSeconds(documents: unknown[], nowMs = Date.now()): number {
  const stamps = documents.map((d) => (d as { _ts?: unknown })._ts).filter((ts): ts is number => typeof ts === "number");
  return stamps.length === 0 ? 0 : Math.max(0, nowMs / 1000 - Math.min(...stamps));
}

/**
 * Where a batch's span belongs: linked to the trace context of every change that carries one,
 * and a child of it when they all carry the same (the usual batch of one request's changes), so
 * that request, this batch and what it starts are one trace. The span the host ran the batch in
 * (the Functions invocation) is linked then.
 */
function batchPlacement(documents: unknown[]): { parent?: Context; links: Link[] } {
  const origins = new Map<string, Link>();
  for (const doc of documents) {
    const origin = traceOriginOf(doc);
    if (origin) origins.set(`${origin.traceId}-${origin.spanId}`, { context: origin });
  }
  const links = [...origins.values()];
  if (links.length !== 1) return { links };
  const invocation = trace.getActiveSpan()?.spanContext();
  return { parent: trace.setSpanContext(ROOT_CONTEXT, links[0].context), links: invocation ? [{ context: invocation }] : [] };
}

/** A change feed handler whose every batch is a span (consumer, container, items, lag) and counted, run in the background. */
export function observedConsumer(
  trigger: { name: string; containerName: string; leaseContainerPrefix: string },
  handler: (documents: unknown[], services: PipelineServices) => Promise<void>,
): (documents: unknown[], services: PipelineServices) => Promise<void> {
  const consumer = trigger.name;
  return (documents, services) =>
    inBackground(() =>
      inSpan(
        `process ${consumer}`,
        {
          kind: SpanKind.CONSUMER,
          ...batchPlacement(documents),
          attributes: {
            [ATTRIBUTES.azureMonitorOperationName]: `process ${consumer}`,
            [ATTRIBUTES.consumer]: consumer,
            [ATTRIBUTES.messagingSystem]: "azure.cosmosdb",
            [ATTRIBUTES.messagingOperationType]: "process",
            [ATTRIBUTES.messagingOperationName]: "process",
            [ATTRIBUTES.messagingDestination]: trigger.containerName,
            [ATTRIBUTES.messagingConsumerGroup]: trigger.leaseContainerPrefix,
            [ATTRIBUTES.items]: documents.length,
            [ATTRIBUTES.lagSeconds]: batchLagSeconds(documents),
          },
        },
        async () => {
          recordChangeFeedItems(consumer, documents.length);
          await handler(documents, services);
        },
      ),
    );
}
