import { contributionId, type ContributionItem } from "../model/items";
import type { BlogStore } from "./client";
import { cosmosStatus } from "./failures";

/** A comment or like as the posts change feed delivers it: who wrote it, where, and when. */
export interface Contribution {
  userId: string;
  postId: string;
  creationDate: string;
}

/**
 * Records, in each writer's own partition of `users`, the posts they wrote on: one create per
 * writer and post not yet recorded (a point read first, so a post they write on again costs a
 * read, not a failed write). Idempotent: a redelivered batch finds its records there.
 */
export async function recordContributions(store: BlogStore, contributions: readonly Contribution[]): Promise<void> {
  const first = new Map<string, Contribution>();
  for (const contribution of contributions) {
    const key = `${contribution.userId}\n${contribution.postId}`;
    const known = first.get(key);
    if (!known || contribution.creationDate < known.creationDate) first.set(key, contribution);
  }
  for (const { userId, postId, creationDate } of first.values()) {
    const item = store.users.item(contributionId(postId), userId);
    const { resource } = await item.read<ContributionItem>();
    if (resource) continue;
    const record: ContributionItem = { id: contributionId(postId), type: "contribution", userId, postId, since: creationDate };
    try {
      await store.users.items.create(record);
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error; // recorded meanwhile by another batch
    }
  }
}

/** The posts a user wrote on (comments or likes), from their own partition: one single-partition query. */
export async function contributedPosts(store: BlogStore, userId: string): Promise<string[]> {
  const { resources } = await store.users.items
    .query<string>(
      { query: "SELECT VALUE c.postId FROM c WHERE c.type = @type", parameters: [{ name: "@type", value: "contribution" }] },
      { partitionKey: userId },
    )
    .fetchAll();
  return resources;
}
