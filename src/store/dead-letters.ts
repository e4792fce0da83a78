import type { Container, NonePartitionKeyType, PartitionKey } from "@azure/cosmos";
import { itemProblem, type ItemContainer } from "../model/item-schemas";
import { idFromParts, nowIso } from "../model/items";
import type { BlogStore } from "./client";
import { cosmosStatus } from "./failures";

/** The containers whose change feeds have consumers, with the partition key path of each. */
const SOURCES = { posts: "postId", users: "userId" } as const;
export type DeadLetterSource = keyof typeof SOURCES & ItemContainer;

/** A change feed document no consumer could process, kept with the reason and where it came from. */
export interface DeadLetter {
  id: string;
  source: DeadLetterSource;
  documentId: string;
  /** The document's partition key value; absent when the document had none. */
  partitionKey?: string;
  reason: string;
  /** The document as the change feed delivered it. */
  document: unknown;
  setAsideAt: string;
}

const sourceContainer = (store: BlogStore, source: DeadLetterSource): Container => store[source];

/**
 * Sets a document aside: one record per version of it (a redelivery finds the record there and
 * writes nothing), so the consumer can go on with the rest of its batch.
 */
export async function setAside(store: BlogStore, source: DeadLetterSource, document: unknown, reason: string): Promise<DeadLetter> {
  const fields = (document ?? {}) as Record<string, unknown>;
  const documentId = String(fields.id ?? "");
  const key = fields[SOURCES[source]];
  const letter: DeadLetter = {
    id: idFromParts("dead-letter", source, documentId, String(fields._lsn ?? fields._etag ?? "")),
    source,
    documentId,
    ...(typeof key === "string" ? { partitionKey: key } : {}),
    reason,
    document,
    setAsideAt: nowIso(),
  };
  try {
    await store.deadLetters.items.create(letter);
  } catch (error) {
    if (cosmosStatus(error) !== 409) throw error;
  }
  return letter;
}

/** Every set-aside document, oldest first (an operator's command: a cross-partition query). */
export async function listDeadLetters(store: BlogStore): Promise<DeadLetter[]> {
  const { resources } = await store.deadLetters.items.query<DeadLetter>("SELECT * FROM d ORDER BY d.setAsideAt ASC").fetchAll();
  return resources;
}

export type ReplayOutcome = { status: "replayed" } | { status: "gone" } | { status: "stillMalformed"; reason: string };

/**
 * Replays a set-aside document once it is fixed: the current version is rewritten as it is, so
 * the change feed delivers it again to its consumer, and the record goes. A document still
 * malformed keeps its record; one deleted since drops it.
 */
export async function replayDeadLetter(store: BlogStore, letter: DeadLetter): Promise<ReplayOutcome> {
  const container = sourceContainer(store, letter.source);
  const partitionKey: PartitionKey = letter.partitionKey ?? noPartitionKey();
  const { resource: current } = await container.item(letter.documentId, partitionKey).read<Record<string, unknown> & { _etag: string }>();
  if (current) {
    const reason = itemProblem(letter.source, current);
    if (reason) return { status: "stillMalformed", reason };
    await container.item(letter.documentId, partitionKey).replace(current, { accessCondition: { type: "IfMatch", condition: current._etag } });
  }
  await store.deadLetters
    .item(letter.id, letter.id)
    .delete()
    .catch((error: unknown) => {
      if (cosmosStatus(error) !== 404) throw error;
    });
  return current ? { status: "replayed" } : { status: "gone" };
}

/** The partition key of a document written without one (the SDK's "none" value, an empty object). */
const noPartitionKey = (): NonePartitionKeyType => ({}) as NonePartitionKeyType;
