// durable-functions' URL check as the bundle gives it (scripts/bundle.ts points the package's
// `validator` here). durable-functions calls only validator's `isURL`, in its durable client;
// validator's own entry loads every one of its hundred-odd checks (0.25 MiB) with the app. The
// check alone is bundled apart (dist/deploy/validator.js) and read when a client first asks.
import type { IsURLOptions } from "validator/lib/isURL";

export const isURL = (value: string, options?: IsURLOptions): boolean =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require("./validator") as typeof import("./validator")).default(value, options);
