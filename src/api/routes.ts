import type { HttpHandler, HttpMethod } from "@azure/functions";
import { addComment, listPostComments } from "./handlers/comments";
import { getFeed } from "./handlers/feed";
import { likeBlogPost, listPostLikes, unlikeBlogPost } from "./handlers/likes";
import { createBlogPost, deleteBlogPost, getBlogPost, updateBlogPost } from "./handlers/posts";
import { createUserProfile, getUserProfile, listPostsOfUser, updateUserProfile } from "./handlers/users";

export interface Route {
  /** The Azure Functions function name. */
  name: string;
  method: HttpMethod;
  /** Relative to the `api` route prefix (host.json). */
  route: string;
  handler: HttpHandler;
}

/** THE route table (README, HTTP API): functions/ registers it with Azure Functions, local/host serves it. */
export const routes: readonly Route[] = [
  { name: "createUser", method: "POST", route: "users", handler: createUserProfile },
  { name: "updateUser", method: "PUT", route: "users/{userId}", handler: updateUserProfile },
  { name: "getUser", method: "GET", route: "users/{userId}", handler: getUserProfile },
  { name: "listUserPosts", method: "GET", route: "users/{userId}/posts", handler: listPostsOfUser },
  { name: "createPost", method: "POST", route: "posts", handler: createBlogPost },
  { name: "updatePost", method: "PUT", route: "posts/{postId}", handler: updateBlogPost },
  { name: "getPost", method: "GET", route: "posts/{postId}", handler: getBlogPost },
  { name: "deletePost", method: "DELETE", route: "posts/{postId}", handler: deleteBlogPost },
  { name: "createComment", method: "POST", route: "posts/{postId}/comments", handler: addComment },
  { name: "listComments", method: "GET", route: "posts/{postId}/comments", handler: listPostComments },
  { name: "likePost", method: "POST", route: "posts/{postId}/likes", handler: likeBlogPost },
  { name: "unlikePost", method: "DELETE", route: "posts/{postId}/likes", handler: unlikeBlogPost },
  { name: "listLikes", method: "GET", route: "posts/{postId}/likes", handler: listPostLikes },
  { name: "getFeed", method: "GET", route: "feed", handler: getFeed },
];
