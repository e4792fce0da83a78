import type { BlogStore } from "../store/client";
import type { OrchestrationContext, Task } from "durable-functions";
import { completeErasure, eraseLeftoversPage, eraseOwnPostsPage, eraseWritingPage, readErasure } from "../store/erasure";
import { erasureInput, orchestrationInput } from "./orchestration-inputs";
import { activityRetry, failureBackoff, withDefaults, type PipelinePolicy } from "./policy";

export const ERASURE = "eraseAccount";
export const ERASURE_ACTIVITIES = {
  eraseOwnPosts: "eraseOwnPosts",
  eraseWriting: "eraseWriting",
  eraseLeftovers: "eraseLeftovers",
  completeErasure: "completeErasure",
} as const;

/** The steps, in order: their posts; their comments and likes elsewhere; what is left in their partition; the record says done. */
const STEPS = ["ownPosts", "writing", "leftovers", "complete"] as const;
export type ErasureStep = (typeof STEPS)[number];

export interface ErasureInput {
  userId: string;
  policy?: Partial<PipelinePolicy>;
  /** Carried across continue-as-new: the step under way, and failed rounds in a row. */
  step?: ErasureStep;
  failures?: number;
}

interface PageInput {
  userId: string;
  pageSize: number;
}

/** What a page answers: whether more follow, or why it refused to act. */
type PageOutcome = { more: boolean } | { refused: string };

/**
 * Each activity acts only on an account whose erasure record exists: an orchestration started by
 * hand (the durable API takes any input) must not erase a live account.
 */
const onlyErased =
  <T extends { userId: string }>(page: (store: BlogStore, input: T) => Promise<{ more: boolean }>) =>
  async (store: BlogStore, input: T): Promise<PageOutcome> =>
    (await readErasure(store, input.userId)) ? page(store, input) : { refused: `no erasure was asked for the account '${input.userId}'` };

/** Activities: one bounded page of a step each (the store's functions, src/store/erasure.ts). */
export const eraseOwnPosts = onlyErased((store, input: PageInput) => eraseOwnPostsPage(store, input.userId, input.pageSize));
export const eraseWriting = onlyErased((store, input: PageInput) => eraseWritingPage(store, input.userId, input.pageSize));
export const eraseLeftovers = onlyErased((store, input: PageInput) => eraseLeftoversPage(store, input.userId, input.pageSize));
export const completeErasureActivity = onlyErased((store, input: { userId: string }) => completeErasure(store, input.userId).then(() => ({ more: false })));

const ACTIVITY_OF: Record<ErasureStep, string> = {
  ownPosts: ERASURE_ACTIVITIES.eraseOwnPosts,
  writing: ERASURE_ACTIVITIES.eraseWriting,
  leftovers: ERASURE_ACTIVITIES.eraseLeftovers,
  complete: ERASURE_ACTIVITIES.completeErasure,
};

/**
 * Orchestration: erases one account after its profile was replaced by the erasure record (the
 * users change feed starts it from that record). Each execution runs one bounded page of one
 * step and continues as new, so the history stays small however much the user wrote; a step
 * ends when a page comes back short. Every page is idempotent, so a crash or a redelivery at
 * any point only repeats a page. A round whose activity ran out of attempts waits (a durable
 * timer, backing off) and tries again: an erasure is never given up. Progress is in the record
 * (GET /api/users/{userId}/erasure), the step in the custom status. An account with no erasure
 * record is left alone: the instance fails once, saying so.
 */
export function* eraseAccount(context: OrchestrationContext): Generator<Task, { erased: true } | undefined, unknown> {
  const input: ErasureInput = orchestrationInput(ERASURE, erasureInput, context.df.getInput());
  const policy = withDefaults(input.policy);
  const step = input.step ?? STEPS[0];
  context.df.setCustomStatus({ step, failures: input.failures ?? 0 });
  let page: PageOutcome;
  try {
    page = (yield context.df.callActivityWithRetry(ACTIVITY_OF[step], activityRetry(policy), {
      userId: input.userId,
      pageSize: policy.pageSize,
    })) as PageOutcome;
  } catch {
    const failures = (input.failures ?? 0) + 1;
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + failureBackoff(policy, failures)));
    context.df.continueAsNew({ ...input, step, failures });
    return undefined;
  }
  // Not a failure to retry: the instance fails once, with its reason.
  if ("refused" in page) throw new Error(`${ERASURE} refuses to act: ${page.refused}`);
  if (page.more) {
    context.df.continueAsNew({ ...input, step, failures: 0 });
    return undefined;
  }
  const next = STEPS[STEPS.indexOf(step) + 1];
  if (next === undefined) return { erased: true };
  context.df.continueAsNew({ ...input, step: next, failures: 0 });
  return undefined;
}
