import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { random } from "./random";
import { CosmosError } from "../wire/errors";
import { tooManyRequests } from "./throughput";

/** What a data-plane request does, as fault rules name it. */
const OPERATION_KINDS = ["read", "query", "write", "batch", "sproc", "changefeed"] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/**
 * The failures Azure Cosmos DB answers with, each a real HTTP response so the SDK's own retry
 * policy sees it: 429 (throttled, with `x-ms-retry-after-ms`), 408 (timeout), 503 (service
 * unavailable), 449 (retry with: a concurrent update), 403 with sub-status 5301 (the caller's
 * identity lacks a data-plane role: missing, or still propagating after a deploy), added
 * latency, and a stored procedure that does its work and then times out (rolled back, 408).
 */
const FAULT_EFFECTS = ["429", "408", "503", "449", "403", "latency", "sproc-timeout"] as const;
export type FaultEffect = (typeof FAULT_EFFECTS)[number];

const ruleSchema = z
  .object({
    effect: z.enum(FAULT_EFFECTS),
    /** Share of matching requests hit, 0..1. */
    rate: z.number().min(0).max(1),
    /** Operation kinds it applies to (all data-plane kinds when absent). */
    operations: z.array(z.enum(OPERATION_KINDS)).min(1).optional(),
    /** Container ids it applies to (all when absent). */
    containers: z.array(z.string().min(1)).min(1).optional(),
    /** For `latency`: the delay; for `429`: the wait the answer asks for. */
    ms: z.number().int().min(0).max(60_000).optional(),
    /** At most this many injections, then the rule is spent (an outage that ends). */
    limit: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((rule) => rule.effect !== "sproc-timeout" || (rule.operations ?? ["sproc"]).every((kind) => kind === "sproc"), {
    message: "sproc-timeout applies to stored procedure calls only",
  });
export type FaultRule = z.infer<typeof ruleSchema>;

const specSchema = z.object({ seed: z.number().int().optional(), rules: z.array(ruleSchema) }).strict();
export type FaultSpec = z.infer<typeof specSchema>;

/**
 * A fault spec from the command line: a JSON file (`faults.json`), inline JSON, or the compact
 * form `effect[=ms]:rate[@kind+kind][/container+container]`, rules separated by commas, e.g.
 * `429:0.05@write+sproc/posts,latency=200:0.1@read,sproc-timeout:0.02`.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const trimmed = text.trim();
  if (trimmed.endsWith(".json")) return parseJson(readFileSync(trimmed, "utf8"), trimmed);
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) return parseJson(trimmed, "--faults");
  return checked(
    {
      rules: trimmed
        .split(",")
        .filter((part) => part.trim())
        .map(compactRule),
    },
    "--faults",
  );
}

function parseJson(text: string, source: string): FaultSpec {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  return checked(Array.isArray(value) ? { rules: value } : value, source);
}

function checked(value: unknown, source: string): FaultSpec {
  const parsed = specSchema.safeParse(value);
  if (!parsed.success) throw new Error(`${source}: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "spec"}: ${issue.message}`).join("; ")}`);
  return parsed.data;
}

function compactRule(part: string): unknown {
  const match = /^([a-z0-9-]+)(?:=(\d+))?:([0-9.]+)(?:@([a-z+]+))?(?:\/([A-Za-z0-9_+-]+))?$/.exec(part.trim());
  if (!match) throw new Error(`--faults: '${part.trim()}' is not effect[=ms]:rate[@kind+kind][/container+container]`);
  const [, effect, ms, rate, operations, containers] = match;
  return {
    effect,
    rate: Number(rate),
    ...(ms === undefined ? {} : { ms: Number(ms) }),
    ...(operations ? { operations: operations.split("+") } : {}),
    ...(containers ? { containers: containers.split("+") } : {}),
  };
}

/** What the server decided for one request: wait first, fail it, or let a sproc run and then fail. */
export interface FaultPlan {
  delayMs: number;
  error?: CosmosError;
  /** Run the stored procedure, then roll it back and answer this error (a timeout after partial work). */
  afterWork?: CosmosError;
}

/**
 * Draws faults for requests from a seeded generator (the same seed and request sequence give
 * the same faults) and counts what it injected.
 */
export class FaultInjector {
  private readonly next: () => number;
  /** Injections per rule, for rules with a `limit`. */
  private readonly spent: number[] = [];
  readonly injected: Record<FaultEffect, number> = { "429": 0, "408": 0, "503": 0, "449": 0, "403": 0, latency: 0, "sproc-timeout": 0 };

  constructor(private readonly spec: FaultSpec) {
    this.next = random(spec.seed ?? 1);
  }

  get total(): number {
    return Object.values(this.injected).reduce((sum, count) => sum + count, 0);
  }

  plan(kind: OperationKind, container: string): FaultPlan {
    const plan: FaultPlan = { delayMs: 0 };
    for (const [index, rule] of this.spec.rules.entries()) {
      if (rule.limit !== undefined && (this.spent[index] ?? 0) >= rule.limit) continue;
      if (rule.operations && !rule.operations.includes(kind)) continue;
      if (rule.effect === "sproc-timeout" && kind !== "sproc") continue;
      if (rule.containers && !rule.containers.includes(container)) continue;
      if (this.next() >= rule.rate) continue;
      this.injected[rule.effect]++;
      this.spent[index] = (this.spent[index] ?? 0) + 1;
      if (rule.effect === "latency") plan.delayMs += rule.ms ?? 100;
      else if (rule.effect === "sproc-timeout") plan.afterWork ??= timedOut("The stored procedure timed out after doing part of its work; it was rolled back.");
      else plan.error ??= failure(rule.effect, rule.ms);
    }
    return plan;
  }

  /** Waits the plan's latency, then throws its error, if any. */
  async apply(plan: FaultPlan): Promise<void> {
    if (plan.delayMs > 0) await sleep(plan.delayMs);
    if (plan.error) throw plan.error;
  }
}

const timedOut = (message: string) => new CosmosError(408, "RequestTimeout", message);

function failure(effect: "429" | "408" | "503" | "449" | "403", ms: number | undefined): CosmosError {
  switch (effect) {
    case "429":
      return tooManyRequests(ms ?? 100);
    case "408":
      return timedOut("The request timed out (injected fault).");
    case "503":
      return new CosmosError(503, "ServiceUnavailable", "The service is currently unavailable (injected fault).", 21008);
    case "449":
      return new CosmosError(449, "RetryWith", "Conflicting request to resource has been attempted. Retry to avoid conflicts (injected fault).");
    case "403":
      return new CosmosError(
        403,
        "Forbidden",
        "Request blocked by Auth: the principal does not have the required RBAC permissions to perform this action (injected fault).",
        5301,
      );
  }
}
