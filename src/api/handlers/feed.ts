import { withoutSystemFields } from "../../model/items";
import { readFeed } from "../../store/feed";
import { endpoint } from "../http";
import { feedQuery } from "../schemas";

/** GET /feed — Q6: the newest posts in short form, from the single feed partition. */
export const getFeed = endpoint(async (call) => {
  const { limit } = call.query(feedQuery);
  const items = await readFeed(limit);
  return { status: 200, body: { items: items.map(withoutSystemFields) } };
});
