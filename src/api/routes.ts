import { z, type ZodTypeAny } from "zod";
import { instrumented } from "./http";
import type { OperationDoc, Route } from "./route-definition";
import {
  commentResponse,
  erasureResponse,
  exportPageResponse,
  feedResponse,
  likeResponse,
  pageOf,
  postResponse,
  shortPostResponse,
  userResponse,
} from "./responses";
import { commentBody, feedQuery, listQuery, postBody, userBody } from "./schemas";
import { createComment, listComments } from "./handlers/comments";
import { getFeed } from "./handlers/feed";
import { openApiEndpoint } from "./handlers/openapi";
import { likePost, listLikes, unlikePost } from "./handlers/likes";
import { createPost, deletePost, getPost, updatePost } from "./handlers/posts";
import { createUser, deleteUser, exportUser, getErasure, getUser, listUserPosts, updateUser } from "./handlers/users";

/** Every route that reads the store may answer these: throttled beyond the SDK's retries, a malformed stored item, or the store unavailable. */
const STORE = [429, 500, 503];
const READ_ERRORS = [400, 404, 412, ...STORE];
/** Every route honours both (RFC 9110 13.1): a read's If-Match and a write's If-None-Match are 412 when they fail. */
const CONDITIONS: NonNullable<OperationDoc["headers"]> = ["If-Match", "If-None-Match"];
const WRITE_ERRORS = [400, 401, 403, 404, 412, 413, 415, ...STORE];
const list = (summary: string, request: string, item: ZodTypeAny): OperationDoc => ({
  summary,
  request,
  auth: false,
  query: listQuery,
  success: [
    { status: 200, description: "One page", schema: pageOf(item) },
    { status: 304, description: "Not modified (If-None-Match)" },
  ],
  errors: READ_ERRORS,
  headers: CONDITIONS,
});

/** A route as the hosts serve it: its handler instrumented, and HEAD wherever GET is. */
const hosted = (route: Omit<Route, "methods">): Route => ({
  ...route,
  handler: instrumented(route, route.handler),
  methods: route.method === "GET" ? ["GET", "HEAD"] : [route.method],
});

/** THE route table (README, HTTP API): functions/ registers it with Azure Functions, the local host (packages/local-host) serves it. */
export const routes: readonly Route[] = (
  [
    {
      name: "createUser",
      method: "POST",
      route: "users",
      handler: createUser,
      doc: {
        summary: "Create your profile (id = the token's sub)",
        request: "C1",
        auth: true,
        body: userBody,
        success: [{ status: 201, description: "Created", schema: userResponse }],
        errors: [...WRITE_ERRORS, 409],
        headers: CONDITIONS,
        responseHeaders: ["ETag", "Location"],
      },
    },
    {
      name: "updateUser",
      method: "PUT",
      route: "users/{userId}",
      handler: updateUser,
      doc: {
        summary: "Change your username (reaches every item of yours)",
        request: "C1",
        auth: true,
        body: userBody,
        success: [{ status: 200, description: "Updated", schema: userResponse }],
        errors: [...WRITE_ERRORS, 409],
        headers: CONDITIONS,
      },
    },
    {
      name: "getUser",
      method: "GET",
      route: "users/{userId}",
      handler: getUser,
      doc: {
        summary: "Get a user",
        request: "Q1",
        auth: false,
        success: [
          { status: 200, description: "The user", schema: userResponse },
          { status: 304, description: "Not modified" },
        ],
        errors: READ_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "listUserPosts",
      method: "GET",
      route: "users/{userId}/posts",
      handler: listUserPosts,
      doc: list("A user's posts in short form, newest first", "Q3", shortPostResponse),
    },
    {
      name: "deleteUser",
      method: "DELETE",
      route: "users/{userId}",
      handler: deleteUser,
      doc: {
        summary: "Erase your account (or, with an admin role, anyone's): the profile goes at once, the rest in the background",
        auth: true,
        success: [{ status: 202, description: "Erasure under way (or asked for before); its status at Location", schema: erasureResponse }],
        errors: [400, 401, 403, 404, 413, 415, ...STORE],
        responseHeaders: ["Location", "Retry-After"],
      },
    },
    {
      name: "getErasure",
      method: "GET",
      route: "users/{userId}/erasure",
      handler: getErasure,
      doc: {
        summary: "Where an account's erasure stands (the owner, or an admin)",
        auth: true,
        success: [
          { status: 200, description: "The erasure", schema: erasureResponse },
          { status: 304, description: "Not modified" },
        ],
        errors: [400, 401, 403, 404, 412, ...STORE],
        headers: CONDITIONS,
      },
    },
    {
      name: "exportUser",
      method: "GET",
      route: "users/{userId}/export",
      handler: exportUser,
      doc: {
        summary: "Download your data, a page at a time: profile, posts, and the comments and likes you wrote",
        auth: true,
        readsSeveralPartitions: "a page reads each of its posts, and the partitions of the posts the user wrote on (no query over every partition)",
        query: listQuery,
        success: [{ status: 200, description: "One page of the export; follow continuationToken until it is null", schema: exportPageResponse }],
        errors: [400, 401, 403, 404, ...STORE],
        responseHeaders: ["Content-Disposition", "Cache-Control"],
      },
    },
    {
      name: "createPost",
      method: "POST",
      route: "posts",
      handler: createPost,
      doc: {
        summary: "Write a post",
        request: "C2",
        auth: true,
        body: postBody,
        success: [{ status: 201, description: "Created (or the first result again, for a repeated Idempotency-Key)", schema: postResponse }],
        errors: [...WRITE_ERRORS, 422],
        headers: [...CONDITIONS, "Idempotency-Key"],
        responseHeaders: ["ETag", "Location", "Idempotent-Replayed"],
      },
    },
    {
      name: "updatePost",
      method: "PUT",
      route: "posts/{postId}",
      handler: updatePost,
      doc: {
        summary: "Edit your post",
        request: "C2",
        auth: true,
        body: postBody,
        success: [{ status: 200, description: "Updated", schema: postResponse }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "getPost",
      method: "GET",
      route: "posts/{postId}",
      handler: getPost,
      doc: {
        summary: "Get a post with its author's username and counts",
        request: "Q2",
        auth: false,
        success: [
          { status: 200, description: "The post", schema: postResponse },
          { status: 304, description: "Not modified" },
        ],
        errors: READ_ERRORS,
        headers: CONDITIONS,
        responseHeaders: ["Cache-Control"],
      },
    },
    {
      name: "deletePost",
      method: "DELETE",
      route: "posts/{postId}",
      handler: deletePost,
      doc: {
        summary: "Delete your post, its comments and likes (idempotent)",
        auth: true,
        success: [{ status: 204, description: "Deleted" }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "createComment",
      method: "POST",
      route: "posts/{postId}/comments",
      handler: createComment,
      doc: {
        summary: "Comment on a post",
        request: "C3",
        auth: true,
        body: commentBody,
        success: [{ status: 201, description: "Created (or the first result again, for a repeated Idempotency-Key)", schema: commentResponse }],
        errors: [...WRITE_ERRORS, 422],
        headers: [...CONDITIONS, "Idempotency-Key"],
        responseHeaders: ["Idempotent-Replayed"],
      },
    },
    {
      name: "listComments",
      method: "GET",
      route: "posts/{postId}/comments",
      handler: listComments,
      doc: list("A post's comments, oldest first", "Q4", commentResponse),
    },
    {
      name: "likePost",
      method: "POST",
      route: "posts/{postId}/likes",
      handler: likePost,
      doc: {
        summary: "Like a post (once per user)",
        request: "C4",
        auth: true,
        success: [
          { status: 201, description: "Liked", schema: likeResponse },
          { status: 200, description: "Already liked: nothing changed", schema: likeResponse },
        ],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "unlikePost",
      method: "DELETE",
      route: "posts/{postId}/likes",
      handler: unlikePost,
      doc: {
        summary: "Take your like back",
        request: "C4",
        auth: true,
        success: [{ status: 204, description: "Unliked" }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    { name: "listLikes", method: "GET", route: "posts/{postId}/likes", handler: listLikes, doc: list("A post's likes", "Q5", likeResponse) },
    {
      name: "getFeed",
      method: "GET",
      route: "feed",
      handler: getFeed,
      doc: {
        summary: "The newest posts in short form",
        request: "Q6",
        auth: false,
        query: feedQuery,
        success: [
          { status: 200, description: "The feed", schema: feedResponse },
          { status: 304, description: "Not modified" },
        ],
        errors: [400, 412, ...STORE],
        headers: CONDITIONS,
        responseHeaders: ["Cache-Control"],
      },
    },
    {
      name: "getOpenApi",
      method: "GET",
      route: "openapi.json",
      handler: openApiEndpoint(() => routes),
      doc: {
        summary: "This description of the API (OpenAPI 3.1)",
        auth: false,
        success: [
          { status: 200, description: "The OpenAPI document", schema: z.object({ openapi: z.string() }).passthrough() },
          { status: 304, description: "Not modified" },
        ],
        errors: [412],
        headers: CONDITIONS,
        responseHeaders: ["Cache-Control"],
      },
    },
  ] satisfies Omit<Route, "methods">[]
).map(hosted);
