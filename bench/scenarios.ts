import { randomUUID } from "node:crypto";
import type { BlogStore } from "../src/store/client";
import { readFeed } from "../src/store/feed";
import { listComments, listLikes, listUserPosts } from "../src/store/lists";
import { createComment, createPost, likePost, readPost } from "../src/store/posts";
import { createUser, readUser } from "../src/store/users";
import type { Dataset } from "./dataset";
import type { V1Strategy } from "./v1";

export interface Scenario {
  id: string;
  name: string;
  v1(i: number): Promise<unknown>;
  v3(i: number): Promise<unknown>;
}

/** V3's writes go through what the API handlers do: the profile read, then the store call. */
async function profile(store: BlogStore, userId: string) {
  const user = await readUser(store, userId);
  if (!user) throw new Error(`benchmark user ${userId} is missing`);
  return user;
}

/**
 * The ten requests of the article. V3 calls the product's own store functions (the code the
 * API runs), V1 the baseline model. Inputs are picked deterministically from the dataset.
 */
/**
 * The post the article's figures were measured on, as its own table gives it away: its V1 lists
 * of comments and likes cost 20 and 50 RU more than its V2 ones, which differ only by a 1 RU
 * username read per item, so that post had 20 comments and 50 likes. Q2, Q4 and Q5 read posts of
 * that shape (the nearest the dataset has), so that their figures compare with the article's.
 */
const ARTICLES_POST = { comments: 20, likes: 50 };

/** The dataset's posts nearest the article's in shape. */
function nearestToArticlesPost(dataset: Dataset) {
  const distance = (p: Dataset["posts"][number]) => Math.abs(p.comments.length - ARTICLES_POST.comments) + Math.abs(p.likes.length - ARTICLES_POST.likes);
  const nearest = Math.min(...dataset.posts.map(distance));
  return dataset.posts.filter((p) => distance(p) === nearest);
}

export function scenarios(store: BlogStore, dataset: Dataset, v1: V1Strategy, pick: () => number, feedSize: number): Scenario[] {
  const user = () => dataset.users[Math.floor(pick() * dataset.users.length)].userId;
  const post = () => dataset.posts[Math.floor(pick() * dataset.posts.length)];
  const articleShaped = nearestToArticlesPost(dataset);
  const articlesPost = () => articleShaped[Math.floor(pick() * articleShaped.length)];
  // C4 likes with the users C1 created, so every like is a new one.
  const newUser = (strategy: string, i: number) => `bench-${strategy}-${i}`;
  return [
    { id: "C1", name: "create user", v1: (i) => v1.createUser(newUser("v1", i), `v1_new_${i}`), v3: (i) => createUser(store, newUser("v3", i), `v3_new_${i}`) },
    { id: "Q1", name: "get user", v1: () => v1.getUser(user()), v3: () => readUser(store, user()) },
    {
      id: "C2",
      name: "create post",
      v1: () => v1.createPost(randomUUID(), user(), "Benchmark post", "content"),
      v3: async () => createPost(store, randomUUID(), await profile(store, user()), { title: "Benchmark post", content: "content" }),
    },
    { id: "Q2", name: "get post", v1: () => v1.getPost(articlesPost().postId), v3: () => readPost(store, articlesPost().postId) },
    { id: "Q3", name: "list a user's posts (short form)", v1: () => v1.listUserPosts(user()), v3: () => listUserPosts(store, user(), 100) },
    {
      id: "C3",
      name: "create comment",
      v1: () => v1.createComment(post().postId, randomUUID(), user(), "comment"),
      v3: async () => createComment(store, post().postId, await profile(store, user()), randomUUID(), "comment"),
    },
    { id: "Q4", name: "list a post's comments", v1: () => v1.listComments(articlesPost().postId), v3: () => listComments(store, articlesPost().postId, 100) },
    {
      id: "C4",
      name: "like a post",
      v1: (i) => v1.likePost(post().postId, newUser("v1", i)),
      v3: async (i) => likePost(store, post().postId, await profile(store, newUser("v3", i))),
    },
    { id: "Q5", name: "list a post's likes", v1: () => v1.listLikes(articlesPost().postId), v3: () => listLikes(store, articlesPost().postId, 100) },
    { id: "Q6", name: `the ${feedSize} most recent posts`, v1: () => v1.feed(feedSize), v3: () => readFeed(store, feedSize) },
  ];
}
