import { spawn, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import { CosmosClient, type Container } from "@azure/cosmos";
import { JUDGED_ROUNDS, median } from "./measure";
import { announced, rssMB } from "./system-process";

/**
 * The embedded server beside its one peer, @vercel/cosmosdb-server (the other Node.js server of
 * the Cosmos DB protocol, on the same SQL engine), each in a process of its own and reached
 * through the same @azure/cosmos client: every item operation and query the app makes, one at
 * a time and 16 in flight, in rounds that alternate between the two, and each server's memory
 * once loaded. The peer is a dev dependency: nothing is installed while the benchmark runs.
 */
export const PEER_OPERATIONS = ["point read", "upsert", "replace", "delete", "single-partition query", "cross-partition query"] as const;
export type PeerOperation = (typeof PEER_OPERATIONS)[number];

export interface PeerFigures {
  items: number;
  partitionKeys: number;
  rounds: number;
  /** Operations a second, the median of the rounds, per operation and concurrency. */
  rates: { operation: PeerOperation; inFlight: number; embedded: number; peer: number; ratio: number; spread: [number, number] }[];
  rssMB: { embedded: number; peer: number };
}

/** The comparison's size by default: 10,000 items over 100 keys. */
const ITEMS = 10_000;
const PARTITION_KEYS = 100;
/** About 1 KB per item, as the comparison the issue describes. */
const FILLER = "x".repeat(960);
const IN_FLIGHT = [1, 16];

const item = (n: number, version = 0) => ({ id: `i${n}`, pk: `p${n % PARTITION_KEYS}`, n, version, filler: FILLER });

interface Running {
  child: ChildProcess;
  endpoint: string;
  /** The key requests are signed with (the peer checks none). */
  key: string;
}

/** A server once it has said where it listens and with which key. */
const running = async (child: ChildProcess, pattern: RegExp, name: string): Promise<Running> => {
  const [, endpoint, key] = await announced(child, pattern, name);
  return { child, endpoint, key };
};

/** The embedded server's command line, as `npm run cosmos` runs it. */
function startEmbedded(): Promise<Running> {
  const cli = join(dirname(require.resolve("embedded-cosmos")), "cli.js");
  const child = spawn(process.execPath, ["--max-semi-space-size=4", "--heap-growing-percent=25", cli, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  return running(child, /COSMOS_ENDPOINT=(\S+)[\s\S]*COSMOS_KEY=(\S+)/, "the embedded server");
}

/** The peer over plain HTTP (its own createHttpServer), printing where it listens. */
function startPeer(): Promise<Running> {
  const script = `const server = require("@vercel/cosmosdb-server").createHttpServer(); server.listen(0, "127.0.0.1", () => console.log("PEER=http://127.0.0.1:" + server.address().port + "/ KEY=" + Buffer.from("unchecked").toString("base64")));`;
  return running(spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] }), /PEER=(\S+) KEY=(\S+)/, "the peer");
}

/** A container of `items` items over PARTITION_KEYS keys on `endpoint`. */
async function loaded(endpoint: string, key: string, items: number): Promise<{ client: CosmosClient; container: Container }> {
  const client = new CosmosClient({ endpoint, key, connectionPolicy: { enableEndpointDiscovery: false } });
  const { database } = await client.databases.createIfNotExists({ id: "peer" });
  const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
  for (let i = 0; i < items; i += 100) await Promise.all(Array.from({ length: Math.min(100, items - i) }, (_, k) => container.items.upsert(item(i + k))));
  return { client, container };
}

/** How many calls of `operation` (with n = 0, 1, 2...) run in `seconds`, `inFlight` at a time, at most `limit`; and how many a second. */
async function rate(
  seconds: number,
  inFlight: number,
  operation: (n: number) => Promise<unknown>,
  limit = Infinity,
): Promise<{ count: number; perSecond: number }> {
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline && next < limit) await operation(next++);
    }),
  );
  return { count: next, perSecond: next / ((performance.now() - started) / 1000) };
}

/** Each operation on `container`; a round's upserts make the items its deletes remove, so every round starts alike. */
function operations(container: Container, round: number, items: number): Record<PeerOperation, (n: number) => Promise<unknown>> {
  const fresh = (n: number) => ({ ...item(n), id: `r${round}-${n}` });
  return {
    "point read": (n) => container.item(`i${n % items}`, `p${n % PARTITION_KEYS}`).read(),
    upsert: (n) => container.items.upsert(fresh(n)),
    replace: (n) => container.item(`i${n % items}`, `p${n % PARTITION_KEYS}`).replace(item(n % items, round + 1)),
    delete: (n) => container.item(`r${round}-${n}`, `p${n % PARTITION_KEYS}`).delete(),
    "single-partition query": (n) =>
      container.items
        .query(
          {
            query: "SELECT * FROM c WHERE c.pk = @pk AND c.n = @n",
            parameters: [
              { name: "@pk", value: `p${n % PARTITION_KEYS}` },
              { name: "@n", value: n % items },
            ],
          },
          { partitionKey: `p${n % PARTITION_KEYS}` },
        )
        .fetchAll(),
    "cross-partition query": (n) =>
      container.items.query({ query: "SELECT * FROM c WHERE c.n = @n", parameters: [{ name: "@n", value: n % items }] }).fetchAll(),
  };
}

/**
 * Both servers loaded, then `rounds` rounds: in each, every operation at each concurrency on one
 * server and then the other (which goes first alternates), for `seconds` each.
 */
export async function measurePeer(options: { seconds: number; rounds: number; items?: number; onProgress?: (line: string) => void }): Promise<PeerFigures> {
  const items = options.items ?? ITEMS;
  const embedded = await startEmbedded();
  const peer = await startPeer();
  try {
    const sides = { embedded: await loaded(embedded.endpoint, embedded.key, items), peer: await loaded(peer.endpoint, peer.key, items) };
    const rss = { embedded: rssMB(embedded.child), peer: rssMB(peer.child) };
    const samples = new Map<string, { embedded: number[]; peer: number[] }>();
    for (let round = 0; round < options.rounds; round++) {
      const upserted = new Map<string, number>();
      const order = round % 2 === 0 ? (["embedded", "peer"] as const) : (["peer", "embedded"] as const);
      for (const inFlight of IN_FLIGHT)
        for (const operation of PEER_OPERATIONS)
          for (const side of order) {
            // The deletes remove what this round's upserts made, no more.
            const limit = operation === "delete" ? upserted.get(`${side}|${inFlight}`) : undefined;
            const { count, perSecond } = await rate(
              options.seconds,
              inFlight,
              operations(sides[side].container, round * 10 + inFlight, items)[operation],
              limit,
            );
            if (operation === "upsert") upserted.set(`${side}|${inFlight}`, count);
            const key = `${operation}|${inFlight}`;
            const entry = samples.get(key) ?? { embedded: [], peer: [] };
            entry[side].push(perSecond);
            samples.set(key, entry);
          }
      options.onProgress?.(`round ${round + 1} of ${options.rounds}`);
    }
    for (const side of Object.values(sides)) side.client.dispose();
    const rates = IN_FLIGHT.flatMap((inFlight) =>
      PEER_OPERATIONS.map((operation) => {
        const { embedded: ours, peer: theirs } = samples.get(`${operation}|${inFlight}`)!;
        const ratios = ours.map((value, i) => value / theirs[i]);
        return {
          operation,
          inFlight,
          embedded: median(ours),
          peer: median(theirs),
          ratio: median(ratios),
          spread: [Math.min(...ratios), Math.max(...ratios)] as [number, number],
        };
      }),
    );
    return { items, partitionKeys: PARTITION_KEYS, rounds: options.rounds, rates, rssMB: rss };
  } finally {
    embedded.child.kill("SIGKILL");
    peer.child.kill("SIGKILL");
  }
}

/** A rate with its thousands grouped, as the peer table prints them. */
const grouped = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The side-by-side table of the full report. */
export function peerTable(p: PeerFigures): string[] {
  return [
    "",
    `| embedded server beside @vercel/cosmosdb-server (${p.items.toLocaleString("en-US")} items of 1 KB, ${p.partitionKeys} keys; median of ${p.rounds} alternating rounds) | in flight | embedded ops/s | peer ops/s | ratio (spread) | target |`,
    "|---|---|---|---|---|---|",
    ...p.rates.map(
      (r) =>
        `| ${r.operation} | ${r.inFlight} | ${grouped(r.embedded)} | ${grouped(r.peer)} | ${grouped(r.ratio, 2)} (${grouped(r.spread[0], 2)}-${grouped(r.spread[1], 2)}) | >= 1.0 (${r.ratio >= 1 ? "met" : "not met"}) |`,
    ),
    `| RSS once loaded | | ${p.rssMB.embedded} MB | ${p.rssMB.peer} MB | | no higher (${p.rssMB.embedded <= p.rssMB.peer ? "met" : "not met"}) |`,
  ];
}

/** The summary's lines: every operation at or above the peer (judged over JUDGED_ROUNDS rounds), and memory no higher. */
export function peerVerdicts(p: PeerFigures): { figure: string; measured: string; target: string; met: boolean | undefined }[] {
  const judged = p.rounds >= JUDGED_ROUNDS;
  return [
    ...p.rates.map((r) => ({
      figure: `embedded server: ${r.operation}, ${r.inFlight} in flight, beside its peer`,
      measured: `${grouped(r.ratio, 2)}x (${grouped(r.embedded)} against ${grouped(r.peer)} ops/s)`,
      target: judged ? ">= 1.0x" : `>= 1.0x, judged over ${JUDGED_ROUNDS} rounds: --full`,
      met: judged ? r.ratio >= 1 : undefined,
    })),
    {
      figure: "embedded server: RSS once loaded, beside its peer",
      measured: `${p.rssMB.embedded} MB against ${p.rssMB.peer} MB`,
      target: "no higher",
      met: p.rssMB.embedded <= p.rssMB.peer,
    },
  ];
}
