import { createHash } from "node:crypto";
import * as z from "zod";
import { LIMITS } from "../model/limits";

/**
 * What each orchestration accepts as input. The change feed consumers start them, but the
 * durable client API can too (behind the system key in Azure, loopback locally), so an input is
 * checked as any input at an edge: a malformed one fails its instance once, with the reason,
 * instead of running activities that can never succeed and retrying them forever.
 */
const id = z.string().regex(LIMITS.idPattern, "is no valid id");
const ms = (min: number, max: number) => z.number().int().min(min).max(max);

/** A host's pacing overrides, bounded: no input can make an orchestration spin (a retry every millisecond) or sleep for good. */
const policyOverrides = z
  .object({
    activityAttempts: z.number().int().min(1).max(10),
    activityRetryFirstMs: ms(10, 60_000),
    failureBackoffMs: ms(10, 10 * 60_000),
    failureBackoffMaxMs: ms(100, 60 * 60_000),
    settleMs: ms(10, 60_000),
    maxSweeps: z.number().int().min(1).max(100),
    pageSize: z.number().int().min(1).max(1000),
    unbornClaimGraceSeconds: z.number().int().min(1).max(86_400),
    claimRecheckMs: ms(100, 60 * 60_000),
  })
  .partial()
  .strict();

const failures = z.number().int().min(0).max(1_000_000);

export const propagationInput = z.object({
  userId: id,
  policy: policyOverrides.optional(),
  continuation: z.string().max(16_384).nullable().optional(),
  renamedThisSweep: z.number().int().min(0).optional(),
  status: z
    .object({
      username: z.string().nullable(),
      sweep: z.number().int().min(0),
      pages: z.number().int().min(0),
      partitions: z.number().int().min(0),
      updated: z.number().int().min(0),
      failures,
      lastError: z.string().optional(),
    })
    .optional(),
});

export const erasureInput = z.object({
  userId: id,
  policy: policyOverrides.optional(),
  step: z.enum(["ownPosts", "writing", "leftovers", "complete"]).optional(),
  failures: failures.optional(),
});

export const claimsSweepInput = z.object({ userId: id, policy: policyOverrides.optional(), failures: failures.optional() });

export const feedRefreshInput = z.object({
  postId: id,
  sourceLsn: z.number().int().min(0),
  dueAt: z.iso.datetime(),
  policy: policyOverrides.optional(),
  failures: failures.optional(),
});

/** The input as `schema` reads it; an Error naming the orchestration and what is wrong otherwise (the instance fails with it). */
export function orchestrationInput<S extends z.ZodType>(orchestration: string, schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const got = issue.path.reduce<unknown>((value, key) => (value as Record<PropertyKey, unknown> | undefined)?.[key], input);
  throw new Error(
    `${orchestration} refuses its input: ${issue.path.join(".") || "input"}: ${issue.message} (got ${String(JSON.stringify(got)).slice(0, 200)})`,
  );
}

/**
 * An instance id made of `parts`, as the orchestration's starter derives it from a change (so a
 * redelivered change maps to the same instance). Readable when short and plain; otherwise the
 * ids in it are hashed: every id the API accepts (128 characters, `|` and `@` included) must give
 * an instance id every durable store keeps (Azure Storage's table keys, a file name locally).
 */
export function instanceIdOf(prefix: string, ...parts: (string | number)[]): string {
  const readable = [prefix, ...parts].join("-");
  // At most 100 characters, the length Durable Functions documents for instance ids; the API's id characters are safe in every store.
  if (readable.length <= 100 && /^[A-Za-z0-9_.@|-]+$/.test(readable)) return readable;
  return [
    prefix,
    ...parts.map((part) => (typeof part === "number" ? String(part) : `h${createHash("sha256").update(part).digest("base64url").slice(0, 22)}`)),
  ].join("-");
}
