import type { BlogStore } from "../store/client";
import { itemProblem } from "../model/item-schemas";
import { setAside, type DeadLetterSource } from "../store/dead-letters";

/**
 * Hands the well-formed documents of a change feed batch to `handle`. A document that fails its
 * item schema can never be processed: retrying the batch would stall every change behind it
 * for good. So it is set aside as a dead letter with its reason (logged once) and the rest goes
 * on. A failure of `handle` itself (throttling, a timeout) still fails the batch: it is retried.
 */
export async function setAsideMalformed(
  store: BlogStore,
  source: DeadLetterSource,
  documents: unknown[],
  log: (message: string) => void,
  handle: (wellFormed: unknown[]) => Promise<void>,
): Promise<void> {
  const wellFormed: unknown[] = [];
  for (const document of documents) {
    const reason = itemProblem(source, document);
    if (reason === undefined) {
      wellFormed.push(document);
      continue;
    }
    const letter = await setAside(store, source, document, reason);
    log(`set aside ${source} document '${letter.documentId}' as dead letter ${letter.id}: ${reason}`);
  }
  if (wellFormed.length > 0) await handle(wellFormed);
}
