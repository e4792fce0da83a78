import { InvocationContext } from "@azure/functions";
import type { OrchestrationHandler } from "durable-functions";
import { Entity } from "durable-functions/lib/src/entities/Entity";
import { Orchestrator } from "durable-functions/lib/src/orchestrations/Orchestrator";
import type { DurableFunctions, TriggeredFunction } from "../../src";

export type ActivityHandler = (input: never, context: InvocationContext) => unknown;
export type EntityHandler = (context: never) => unknown;

const contextOf = (functionName: string) => new InvocationContext({ functionName, logHandler: () => {} });

/** JSON in, JSON out, as the trigger's data crosses the wire (the package mutates what it is given). */
const overTheWire =
  (name: string, run: (trigger: unknown, context: InvocationContext) => unknown): TriggeredFunction =>
  async (trigger) =>
    JSON.stringify((await run(JSON.parse(JSON.stringify(trigger ?? null)), contextOf(name))) ?? null);

/**
 * Handlers as df.app registers them (the package's replay engine and entity executor around
 * each), without loading an app through a worker: for tests of the durable host alone. The
 * local system itself takes them from the app's registrations (src/worker).
 */
export function durableFunctions(handlers: {
  orchestrations?: Record<string, OrchestrationHandler>;
  activities?: Record<string, ActivityHandler>;
  entities?: Record<string, EntityHandler>;
}): DurableFunctions {
  const map = <T>(record: Record<string, T> | undefined, wrap: (name: string, handler: T) => TriggeredFunction) =>
    new Map(Object.entries(record ?? {}).map(([name, handler]) => [name, wrap(name, handler)]));
  return {
    orchestrations: map(handlers.orchestrations, (name, handler) =>
      overTheWire(name, (trigger, context) => new Orchestrator(handler).handle(trigger as never, context)),
    ),
    activities: map(handlers.activities, (name, handler) => overTheWire(name, (input, context) => handler(input as never, context))),
    entities: map(handlers.entities, (name, handler) => overTheWire(name, (trigger, context) => new Entity(handler).handle(trigger as never, context))),
  };
}
