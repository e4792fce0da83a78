/**
 * What `_ts`, TTL expiry and the throughput budget read: the system's time, or a clock a test
 * moves by hand (any object with `now()`, such as a host's manual clock).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
