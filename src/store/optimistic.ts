import { setTimeout as sleep } from "node:timers/promises";
import { cosmosStatus } from "./failures";

/**
 * Optimistic concurrency as the profile and claim writes use it: read, write on the version
 * read (If-Match), and on a lost race read again, after a growing random wait.
 */
/** Optimistic rounds before a write that keeps losing races gives up with 409. */
export const ATTEMPTS = 16;

/** Before another optimistic round: a random wait that grows with each lost race (at most 160 ms), so racing writers stop colliding. */
export const backOff = (attempt: number) => (attempt === 0 ? Promise.resolve() : sleep(Math.random() * 5 * 2 ** Math.min(attempt, 5)));

/** Runs a conditional write; false when its condition failed (412) or the item is gone (404). */
export async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) return false;
    throw error;
  }
}
