import { startCosmos } from "embedded-cosmos";
import { createStore, type BlogStore } from "../src/store/client";
import { measureCosmos } from "../src/store/metering";
import { inBackground } from "../src/store/priority";
import { provision } from "../src/store/provision";
import { percentile } from "./measure";

/**
 * Priority-based execution under throttling: one partition of `posts` with a budget of
 * OPERATIONS_PER_SECOND, a background that offers far more than that (as a change feed consumer
 * catching up does), and readers at a steady rate well inside it. With priorities, the
 * background's requests are low priority and throttled first; without, everyone's are alike.
 * The background has a backlog of work (reads) worth more than the window's budget, as a
 * consumer behind does, and works until it has cleared it. Reported: the readers' p99 and the
 * 429s they met (the SDK's retries absorb them, at the cost of the wait), what the background
 * got done while the readers read, and when it had cleared its backlog. Two runs of each, alternating.
 */
export interface PriorityFigures {
  seconds: number;
  operationsPerSecond: number;
  readersPerSecond: number;
  runs: {
    priorities: boolean;
    readerP99Ms: number;
    readerThrottled: number;
    readerRequests: number;
    /** Background reads served while the readers read. */
    backgroundDone: number;
    /** Seconds from the start until the background had cleared its backlog. */
    backlogClearedSeconds: number;
  }[];
}

const OPERATIONS_PER_SECOND = 200;
const READERS_PER_SECOND = 50;
const BACKGROUND_IN_FLIGHT = 16;

/** A point read of the post, the API's Q2 at the SDK's level. */
const pointRead = (store: BlogStore, postId: string) => store.posts.item(postId, postId).read();

async function run(store: BlogStore, postId: string, seconds: number, priorities: boolean) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  // Half again what the window's budget (and the second's worth a partition saves up) can serve: the background is behind from the start.
  let backlog = Math.round(OPERATIONS_PER_SECOND * (seconds + 1) * 1.5);
  let backgroundDone = 0;
  let clearedAt = started;
  const background = async () => {
    while (backlog > 0) {
      // Done when served: a read the SDK gave up on after its retries is work still owed.
      const read = () =>
        pointRead(store, postId).then(
          () => {
            backlog--;
            if (performance.now() < deadline) backgroundDone++;
            clearedAt = performance.now();
          },
          () => undefined,
        );
      await (priorities ? inBackground(read) : read());
    }
  };
  const latencies: number[] = [];
  let throttled = 0;
  const readers = async () => {
    const interval = 1000 / READERS_PER_SECOND;
    for (let next = performance.now(); next < deadline; next += interval) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const started = performance.now();
      // Every 429 the reader met, also those the SDK's retries absorbed.
      const { usage } = await measureCosmos(() => pointRead(store, postId).catch(() => undefined));
      throttled += usage.requests.filter((request) => request.status === 429).length;
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all([readers(), ...Array.from({ length: BACKGROUND_IN_FLIGHT }, background)]);
  return {
    priorities,
    readerP99Ms: percentile(
      [...latencies].sort((a, b) => a - b),
      99,
    ),
    readerThrottled: throttled,
    readerRequests: latencies.length,
    backgroundDone,
    backlogClearedSeconds: (clearedAt - started) / 1000,
  };
}

export async function measurePriority(seconds: number): Promise<PriorityFigures> {
  const cosmos = await startCosmos({ operationsPerSecond: OPERATIONS_PER_SECOND, partitions: 1 });
  // The SDK's retries on, as the app runs them, with a short cap so a throttled reader shows in its latency.
  const store = createStore({ cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blog", maxRetryWaitSeconds: 2 } });
  try {
    await provision(store.client, "blog");
    const postId = "hot-post";
    await store.posts.items.upsert({ id: postId, postId, type: "post", title: "a post everyone reads" });
    const runs = [];
    for (const priorities of [false, true, false, true]) runs.push(await run(store, postId, seconds, priorities));
    return { seconds, operationsPerSecond: OPERATIONS_PER_SECOND, readersPerSecond: READERS_PER_SECOND, runs };
  } finally {
    store.dispose();
    await cosmos.stop();
  }
}

/** The runs with priorities and without, each kind summed (p99: the worse of its runs). */
function sides(figures: PriorityFigures) {
  const of = (priorities: boolean) => {
    const runs = figures.runs.filter((run) => run.priorities === priorities);
    return {
      p99: Math.max(...runs.map((run) => run.readerP99Ms)),
      throttled: runs.reduce((n, run) => n + run.readerThrottled, 0),
      requests: runs.reduce((n, run) => n + run.readerRequests, 0),
      background: runs.reduce((n, run) => n + run.backgroundDone, 0) / runs.length,
      cleared: Math.max(...runs.map((run) => run.backlogClearedSeconds)),
    };
  };
  return { with: of(true), without: of(false) };
}

/** The comparison's rows of the full report. */
export function priorityTable(figures: PriorityFigures): string[] {
  const { with: on, without: off } = sides(figures);
  const row = (name: string, s: typeof on) =>
    `| ${name} | ${s.p99.toFixed(0)} ms | ${s.throttled} of ${s.requests} reads | ${(s.background / figures.seconds).toFixed(0)} reads/s | ${s.cleared.toFixed(1)} s |`;
  return [
    "",
    `| one partition of ${figures.operationsPerSecond} operations/s, ${figures.readersPerSecond} reads/s of readers beside a background 1.5 budgets behind, ${figures.seconds} s x 2 runs each | readers' p99 | 429s the readers met | background done meanwhile | its backlog cleared after |`,
    "|---|---|---|---|---|",
    row("without priorities", off),
    row("with priorities (the background low)", on),
  ];
}

/** The summary's line: readers meet fewer 429s with priorities than without. */
export function priorityVerdicts(figures: PriorityFigures): { figure: string; measured: string; target: string; met: boolean }[] {
  const { with: on, without: off } = sides(figures);
  return [
    {
      figure: "readers beside a throttled background, priorities on",
      measured: `${on.throttled} 429s, p99 ${on.p99.toFixed(0)} ms (off: ${off.throttled}, ${off.p99.toFixed(0)} ms)`,
      target: "fewer 429s, lower p99",
      met: on.throttled < off.throttled && on.p99 < off.p99,
    },
  ];
}
