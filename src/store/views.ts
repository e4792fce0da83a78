import type { Container, ItemDefinition } from "@azure/cosmos";
import type { PostItem } from "../model/items";
import { toShortForm, type ShortPost } from "../model/short-form";
import { store } from "./client";
import { cosmosStatus } from "./requests";
import { TRIGGERS } from "./definitions";
import { FEED_PARTITION } from "./feed";

/** A short-form copy remembers which version of the post it was made from. */
export type PostCopy = ShortPost & { sourceLsn: number };

/** A post as the change feed delivers it: with its log sequence number. */
export type PostChange = PostItem & { _lsn: number };

interface CopyTarget {
  container: Container;
  partitionKey: string;
  triggers?: string[];
}

function targets(post: PostItem): CopyTarget[] {
  const { users, feed } = store();
  return [
    { container: users, partitionKey: post.userId },
    { container: feed, partitionKey: FEED_PARTITION, triggers: [TRIGGERS.truncateFeed] },
  ];
}

/**
 * Writes `copy` unless the stored copy was made from the same or a newer version, so a
 * redelivered or late batch never puts an older version over a newer one. Optimistic:
 * create-if-absent or replace-if-unchanged, retried when another writer got there first.
 */
async function writeIfNewer(target: CopyTarget, copy: PostCopy): Promise<void> {
  const options = target.triggers ? { postTriggerInclude: target.triggers } : {};
  for (;;) {
    const { resource: existing } = await target.container.item(copy.id, target.partitionKey).read<PostCopy & ItemDefinition>();
    if (existing && existing.sourceLsn >= copy.sourceLsn) return;
    try {
      if (!existing) await target.container.items.create(copy, options);
      else await target.container.item(copy.id, target.partitionKey).replace(copy, { ...options, accessCondition: { type: "IfMatch", condition: existing._etag as string } });
      return;
    } catch (error) {
      if (cosmosStatus(error) !== 409 && cosmosStatus(error) !== 412) throw error;
    }
  }
}

async function removeCopy(target: CopyTarget, postId: string): Promise<void> {
  try {
    await target.container.item(postId, target.partitionKey).delete();
  } catch (error) {
    if (cosmosStatus(error) !== 404) throw error;
  }
}

/** Brings the Q3 (author's partition of `users`) and Q6 (`feed`) copies of a post up to date. */
export async function syncPostCopies(post: PostChange): Promise<void> {
  if (post.deleted) {
    await Promise.all(targets(post).map((target) => removeCopy(target, post.postId)));
    return;
  }
  const copy: PostCopy = { ...toShortForm(post), sourceLsn: post._lsn };
  for (const target of targets(post)) await writeIfNewer(target, copy);
}
