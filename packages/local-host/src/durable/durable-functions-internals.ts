// THE adapter over durable-functions' private modules (lib/src/...): the replay engine's state and
// actions, the history event and action numbers, an entity batch. The package exports none of
// them, and the local durable host drives its replay engine through them; every other file of
// the host imports them from here. Their shapes are declared by hand in package-internals.d.ts,
// and test/durable/internals.test.ts pins them against the installed package, so an upgrade that
// moves or changes one fails there, by name, before the host misbehaves.
export { ActionType } from "durable-functions/lib/src/actions/ActionType";
export { HistoryEventType } from "durable-functions/lib/src/history/HistoryEventType";
export type { OrchestratorState, PackageAction } from "durable-functions/lib/src/orchestrations/Orchestrator";
export type { EntityBatchResult, EntityOperation } from "durable-functions/lib/src/entities/Entity";
