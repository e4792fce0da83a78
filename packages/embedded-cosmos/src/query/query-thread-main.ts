import { parentPort } from "node:worker_threads";
import { StoredItem } from "../engine/stored-item";
import { CosmosError } from "../wire/errors";
import { runQuery } from "./query";
import { withUserFunctions } from "./engine";
import { sandboxedFunctions } from "./udf-sandbox";
import { prepareQuery } from "./sql-support";
import type { QueryAnswer, QueryJob } from "./query-thread";

// The query thread's entry (see QueryThread): evaluates each query over its copy of the items,
// with the user-defined functions it calls sandboxed (udf-sandbox.ts).
parentPort!.on("message", ({ id, job }: { id: number; job: QueryJob }) => {
  let answer: QueryAnswer;
  try {
    const rids = new Map(job.items.map(({ put, rid }) => [put[4], rid]));
    const links = { rid: (seq: number) => rids.get(seq)!, docsSelf: job.docsSelf };
    const items = job.items.map(({ put: [pk, id, json, lsn, seq, etag, ts, ttl] }) => new StoredItem(links, pk, id, json!, lsn, seq, etag!, ts!, ttl));
    const scope = { items: () => items.slice(), size: items.length, contains: () => true };
    const prepared = prepareQuery(job.spec, job.resumeFilter);
    const run = () => runQuery(scope, undefined, prepared, job.continuation, job.maxItemCount, job.scanPageItems);
    answer = { id, page: job.functions ? withUserFunctions(sandboxedFunctions(job.functions), run) : run() };
  } catch (error) {
    const failure = error instanceof CosmosError ? error : new CosmosError(500, "InternalServerError", (error as Error).message);
    answer = { id, error: { status: failure.status, code: failure.code, message: failure.message } };
  }
  parentPort!.postMessage(answer);
});
parentPort!.postMessage({ ready: true });
