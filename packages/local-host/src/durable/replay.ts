import type { OrchestratorState } from "./durable-functions-internals";
import type { TriggeredFunction } from "../worker/function-app";
import type { HistoryEvent, InstanceRecord } from "./store";

/** The orchestrator's error, from the state the package appends to the message for the extension ($OutOfProcData$). */
function failureOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const data = text.indexOf("$OutOfProcData$:");
  if (data >= 0) {
    try {
      const state = JSON.parse(text.slice(data + "$OutOfProcData$:".length)) as { error?: string };
      if (state.error) return state.error;
    } catch {
      // not the package's format: fall back to the message
    }
  }
  return text;
}

/**
 * What the extension bundle's Durable Functions extension sends with every orchestration
 * trigger: replay schema V3 (V4, for critical sections, needs an extension the bundle does not
 * carry yet), its timer limits (TimeSpans) and the polling interval of callHttp.
 */
const TRIGGER_SETTINGS = {
  upperSchemaVersion: 2,
  maximumShortTimerDuration: "6.00:00:00",
  longRunningTimerIntervalDuration: "3.00:00:00",
  defaultHttpAsyncRequestSleepTimeMillseconds: 30_000,
};

/**
 * One episode, as the extension calls the orchestration trigger: the registered function (the
 * package's replay engine) gets the history and answers the orchestrator's state (its actions),
 * or why it failed. `orchestratorThrew` tells a failure of the orchestrator's own from a state
 * the host cannot use.
 */
export async function replayEpisode(
  orchestrator: TriggeredFunction,
  record: InstanceRecord,
  history: HistoryEvent[],
): Promise<{ state: OrchestratorState } | { failure: string; orchestratorThrew: boolean }> {
  let state: OrchestratorState | undefined;
  try {
    state = JSON.parse(
      await orchestrator({
        ...TRIGGER_SETTINGS,
        history,
        input: JSON.parse(record.input),
        instanceId: record.instanceId,
        isReplaying: false,
        parentInstanceId: record.parent?.instanceId ?? "",
      }),
    ) as OrchestratorState;
  } catch (error) {
    return { failure: failureOf(error), orchestratorThrew: true };
  }
  if (!state || !Array.isArray(state.actions))
    return { failure: "The orchestrator returned a malformed state (no list of actions).", orchestratorThrew: false };
  return { state };
}
