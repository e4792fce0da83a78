import { snippetOf } from "../../model/snippet";
import { toShortForm } from "../../model/short-form";
import { searchPosts } from "../../store/search";
import { endpoint, entityTagOf } from "../endpoint";
import { decodeOffset, encodeOffset } from "../pagination";
import { searchQuery, searchTerms } from "../schemas";
import { servedItems } from "../served";

/**
 * GET /search?q=... — the posts that hold any of the words, most relevant first, each in short
 * form with a snippet of its content around the first word found (and where the words are in it).
 */
export const search = endpoint({ query: searchQuery }, async ({ store, query, warn }) => {
  const terms = searchTerms(query.q);
  // A token goes on with the words it was given for, whatever their case or spacing.
  const list = `search:${terms.map((term) => term.toLowerCase()).join(" ")}`;
  const offset = decodeOffset(list, query.continuationToken);
  const page = await searchPosts(store, terms, offset, query.limit);
  const items = servedItems("posts", page.posts, warn).map((post) => ({ ...toShortForm(post), snippet: snippetOf(post.content, terms) }));
  const body = { items, continuationToken: encodeOffset(list, page.more ? offset + page.posts.length : undefined) };
  return { status: 200, body, etag: entityTagOf(body) };
});
