import type { SqlParameter } from "@azure/cosmos";
import type { PostItem } from "../model/items";
import type { BlogStore } from "./client";

/**
 * How search weighs a post's title against its content when it fuses their two rankings (RRF):
 * a title is the author's own summary, so a word there says more of the post than the same word
 * somewhere in its text.
 */
const TITLE_WEIGHT = 2;
const CONTENT_WEIGHT = 1;

/** The page size the SDK asks each range for: at least what a component of the plan gives (its best 120). */
const COMPONENT_PAGE = 1_000;

/** One page of search results, best first. */
export interface SearchPage {
  posts: PostItem[];
  /** Whether more results follow. */
  more: boolean;
}

/**
 * Live posts that hold any of the terms in their title or content, most relevant first: BM25 of
 * each (Cosmos DB's full-text index on `posts`, infra/containers.json), fused by RRF with the
 * title weighted above the content. The one read that is not one partition's: the words of every
 * post are in every partition, so it is a query over all of them (docs/search.md), paged by
 * OFFSET ... LIMIT, since the SDKs give ranked queries no continuation.
 */
export async function searchPosts(store: BlogStore, terms: readonly string[], offset: number, limit: number): Promise<SearchPage> {
  const keywords = terms.map((_, i) => `@t${i}`).join(", ");
  const query =
    `SELECT * FROM p WHERE p.type = "post" AND NOT IS_DEFINED(p.deleted) ` +
    `AND (FullTextContainsAny(p.title, ${keywords}) OR FullTextContainsAny(p.content, ${keywords})) ` +
    `ORDER BY RANK RRF(FullTextScore(p.title, ${keywords}), FullTextScore(p.content, ${keywords}), [${TITLE_WEIGHT}, ${CONTENT_WEIGHT}]) ` +
    `OFFSET @offset LIMIT @take`;
  const parameters: SqlParameter[] = [
    ...terms.map((term, i) => ({ name: `@t${i}`, value: term })),
    { name: "@offset", value: offset },
    { name: "@take", value: limit + 1 },
  ];
  try {
    // Each range gives each component's best results in one page, not the SDK's default of ten at a time.
    const { resources } = await store.posts.items.query<PostItem>({ query, parameters }, { maxItemCount: COMPONENT_PAGE }).fetchAll();
    return { posts: resources.slice(0, limit), more: resources.length > limit };
  } catch (error) {
    if (emptyContainer(error)) return { posts: [], more: false };
    throw error;
  }
}

/**
 * `@azure/cosmos`' hybrid search pipeline refuses statistics that count no document at all: an
 * empty posts container (a new deployment before its first post), where nothing can match.
 */
const emptyContainer = (error: unknown) => error instanceof Error && error.message === "GlobalStats validation failed";
