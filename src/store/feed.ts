import type { ShortPost } from "../model/short-form";
import { store } from "./client";
import { queryPage } from "./requests";

/** The feed container's only partition key value: every item is a post. */
export const FEED_PARTITION = "post";

/** Q6: the `limit` newest posts in short form, from the single `feed` partition. */
export async function readFeed(limit: number): Promise<ShortPost[]> {
  const page = await queryPage<ShortPost>(
    store().feed,
    { query: "SELECT * FROM f WHERE f.type = @type ORDER BY f.creationDate DESC", parameters: [{ name: "@type", value: FEED_PARTITION }] },
    FEED_PARTITION,
    limit,
  );
  return page.items;
}
