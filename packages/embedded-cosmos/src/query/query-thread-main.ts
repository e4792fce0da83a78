import { parentPort } from "node:worker_threads";
import { StoredItem } from "../engine/stored-item";
import { CosmosError } from "../wire/errors";
import { runQuery } from "./query";
import { prepareQuery } from "./sql-support";
import type { QueryAnswer, QueryJob } from "./query-thread";

// The query thread's entry (see QueryThread): evaluates each query over its copy of the items.
parentPort!.on("message", ({ id, job }: { id: number; job: QueryJob }) => {
  let answer: QueryAnswer;
  try {
    const rids = new Map(job.items.map(({ put, rid }) => [put[4], rid]));
    const links = { rid: (seq: number) => rids.get(seq)!, docsSelf: job.docsSelf };
    const items = job.items.map(({ put: [pk, id, json, lsn, seq, etag, ts, ttl] }) => new StoredItem(links, pk, id, json!, lsn, seq, etag!, ts!, ttl));
    const scope = { items: () => items.slice(), size: items.length, contains: () => true };
    const prepared = prepareQuery(job.spec, job.resumeFilter);
    answer = { id, page: runQuery(scope, undefined, prepared, job.continuation, job.maxItemCount, job.scanPageItems) };
  } catch (error) {
    const failure = error instanceof CosmosError ? error : new CosmosError(500, "InternalServerError", (error as Error).message);
    answer = { id, error: { status: failure.status, code: failure.code, message: failure.message } };
  }
  parentPort!.postMessage(answer);
});
