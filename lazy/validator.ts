// Stands in for validator in durable-functions (lazy/splits.ts). durable-functions calls only
// `isURL`, in its durable client; validator's own entry loads every one of its checks with the
// app. The check alone loads when a client first asks.
import type { IsURLOptions } from "validator/lib/isURL";

export const isURL = (value: string, options?: IsURLOptions): boolean =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require("validator/lib/isURL") as typeof import("validator/lib/isURL")).default(value, options);
