import { Cron } from "croner";
import type { Clock } from "../clock";
import type { TimerFunction } from "../worker/function-app";

/** A run that starts later than this after its scheduled time is past due, as the host marks it. */
const PAST_DUE_MS = 1000;

/**
 * The schedule of a timer trigger: NCRONTAB's six fields, seconds first, in UTC (Azure's
 * default without WEBSITE_TIME_ZONE). The TimeSpan form (`hh:mm:ss`) runs only on dedicated
 * plans, not on Flex Consumption, so it is refused here too, by name.
 */
export function scheduleOf(timer: Pick<TimerFunction, "name" | "schedule">): Cron {
  if (/^\d+(\.\d+)?:\d{2}(:\d{2})?$/.test(timer.schedule.trim()))
    throw new Error(`${timer.name}: schedule '${timer.schedule}' is a TimeSpan, which Consumption plans do not run; use an NCRONTAB expression`);
  if (timer.schedule.trim().split(/\s+/).length !== 6)
    throw new Error(
      `${timer.name}: schedule '${timer.schedule}' is not an NCRONTAB expression of six fields ({second} {minute} {hour} {day} {month} {day-of-week})`,
    );
  try {
    return new Cron(timer.schedule, { paused: true, timezone: "Etc/UTC" });
  } catch (error) {
    throw new Error(`${timer.name}: schedule '${timer.schedule}' is not an NCRONTAB expression: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Runs the app's timer functions on their schedules, as the Functions host does: one run of a
 * function at a time (the next occurrence is armed when a run ends, so a slow run skips the
 * occurrences it overlapped, and the late one is marked past due), `runOnStartup` once at start.
 * With several instances Azure runs each occurrence on one of them (a blob lease); each local host
 * runs its own, which a timer whose work is idempotent does not notice.
 */
export class TimerHost {
  private readonly cancels = new Set<() => void>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly timers: readonly TimerFunction[],
    private readonly clock: Clock,
    private readonly log: (line: string) => void = () => {},
  ) {
    // A schedule that cannot be read fails the start, as the host fails the function's indexing.
    for (const timer of timers) scheduleOf(timer);
  }

  start(): void {
    for (const timer of this.timers) {
      const schedule = scheduleOf(timer);
      if (timer.runOnStartup) this.run(timer, schedule, this.clock.now(), undefined);
      else this.arm(timer, schedule, undefined);
    }
  }

  /** Stops arming runs and waits for those under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
    await Promise.all(this.running);
  }

  private arm(timer: TimerFunction, schedule: Cron, last: Date | undefined): void {
    const next = schedule.nextRun(this.clock.now());
    if (this.stopped || !next) return;
    const cancel = this.clock.at(next, () => {
      this.cancels.delete(cancel);
      this.run(timer, schedule, next, last);
    });
    this.cancels.add(cancel);
  }

  private run(timer: TimerFunction, schedule: Cron, due: Date, last: Date | undefined): void {
    const now = this.clock.now();
    const following = schedule.nextRun(now);
    const run = timer
      .invoke({
        Schedule: { AdjustForDST: true },
        ScheduleStatus: last ? { Last: last.toISOString(), Next: (following ?? due).toISOString(), LastUpdated: now.toISOString() } : null,
        IsPastDue: now.getTime() - due.getTime() > PAST_DUE_MS,
      })
      .catch((error: unknown) => this.log(`timer ${timer.name} failed: ${(error as Error).message}`))
      .finally(() => {
        this.running.delete(run);
        this.arm(timer, schedule, due);
      });
    this.running.add(run);
  }
}
