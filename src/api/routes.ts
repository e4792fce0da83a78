import { instrumented } from "./instrumented";
import type { OperationDoc, Route, RouteEntry } from "./route-definition";
import { createComment, listComments } from "./handlers/comments-endpoints";
import { getFeed } from "./handlers/feed-endpoint";
import { openApiEndpoint } from "./handlers/openapi-endpoint";
import { likePost, listLikes, unlikePost } from "./handlers/likes-endpoints";
import { createPost, deletePost, getPost, updatePost } from "./handlers/posts-endpoints";
import { search } from "./handlers/search-endpoint";
import { createUser, deleteUser, exportUser, getErasure, getUser, listUserPosts, updateUser } from "./handlers/users-endpoints";

/** Every route that reads the store may answer these: throttled beyond the SDK's retries, a malformed stored item, or the store unavailable. */
const STORE = [429, 500, 503];
const READ_ERRORS = [400, 404, 412, ...STORE];
/** Every route honours both (RFC 9110 13.1): a read's If-Match and a write's If-None-Match are 412 when they fail. */
const CONDITIONS: NonNullable<OperationDoc["headers"]> = ["If-Match", "If-None-Match"];
const WRITE_ERRORS = [400, 401, 403, 404, 412, 413, 415, ...STORE];
const list = (summary: string, request: string, page: "ShortPostPage" | "CommentPage" | "LikePage"): RouteEntry["doc"] => ({
  summary,
  request,
  success: [
    { status: 200, description: "One page", schema: page },
    { status: 304, description: "Not modified (If-None-Match)" },
  ],
  errors: READ_ERRORS,
  headers: CONDITIONS,
});

/**
 * A route as the hosts serve it: its endpoint instrumented, HEAD wherever GET is, and documented
 * with what the endpoint declares it takes.
 */
const hosted = ({ endpoint: { declared, handler }, doc, ...route }: RouteEntry): Route => ({
  ...route,
  handler: instrumented(route, handler),
  methods: route.method === "GET" ? ["GET", "HEAD"] : [route.method],
  doc: {
    ...doc,
    auth: declared.auth !== undefined,
    query: declared.query,
    body: declared.body,
    headers: [...(doc.headers ?? []), ...(declared.idempotencyKey ? (["Idempotency-Key"] as const) : [])],
  },
});

/** THE route table (README, HTTP API): functions/ registers it with Azure Functions, the local host (packages/local-host) serves it. */
export const routes: readonly Route[] = (
  [
    {
      name: "createUser",
      method: "POST",
      route: "users",
      endpoint: createUser,
      doc: {
        summary: "Create your profile (id = the token's sub)",
        request: "C1",
        success: [{ status: 201, description: "Created", schema: "User" }],
        errors: [...WRITE_ERRORS, 409],
        headers: CONDITIONS,
        responseHeaders: ["ETag", "Location"],
      },
    },
    {
      name: "updateUser",
      method: "PUT",
      route: "users/{userId}",
      endpoint: updateUser,
      doc: {
        summary: "Change your username (reaches every item of yours)",
        request: "C1",
        success: [{ status: 200, description: "Updated", schema: "User" }],
        errors: [...WRITE_ERRORS, 409],
        headers: CONDITIONS,
      },
    },
    {
      name: "getUser",
      method: "GET",
      route: "users/{userId}",
      endpoint: getUser,
      doc: {
        summary: "Get a user",
        request: "Q1",
        success: [
          { status: 200, description: "The user", schema: "User" },
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
      endpoint: listUserPosts,
      doc: list("A user's posts in short form, newest first", "Q3", "ShortPostPage"),
    },
    {
      name: "deleteUser",
      method: "DELETE",
      route: "users/{userId}",
      endpoint: deleteUser,
      doc: {
        summary: "Erase your account (or, with an admin role, anyone's): the profile goes at once, the rest in the background",
        success: [{ status: 202, description: "Erasure under way (or asked for before); its status at Location", schema: "Erasure" }],
        errors: [400, 401, 403, 404, 413, 415, ...STORE],
        responseHeaders: ["Location", "Retry-After"],
      },
    },
    {
      name: "getErasure",
      method: "GET",
      route: "users/{userId}/erasure",
      endpoint: getErasure,
      doc: {
        summary: "Where an account's erasure stands (the owner, or an admin)",
        success: [
          { status: 200, description: "The erasure", schema: "Erasure" },
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
      endpoint: exportUser,
      doc: {
        summary: "Download your data, a page at a time: profile, posts, and the comments and likes you wrote",
        readsSeveralPartitions: "a page reads each of its posts, and the partitions of the posts the user wrote on (no query over every partition)",
        success: [{ status: 200, description: "One page of the export; follow continuationToken until it is null", schema: "ExportPage" }],
        errors: [400, 401, 403, 404, ...STORE],
        responseHeaders: ["Content-Disposition", "Cache-Control"],
      },
    },
    {
      name: "createPost",
      method: "POST",
      route: "posts",
      endpoint: createPost,
      doc: {
        summary: "Write a post",
        request: "C2",
        success: [{ status: 201, description: "Created (or the first result again, for a repeated Idempotency-Key)", schema: "Post" }],
        errors: [...WRITE_ERRORS, 422],
        headers: CONDITIONS,
        responseHeaders: ["ETag", "Location", "Idempotent-Replayed"],
      },
    },
    {
      name: "updatePost",
      method: "PUT",
      route: "posts/{postId}",
      endpoint: updatePost,
      doc: {
        summary: "Edit your post",
        request: "C2",
        success: [{ status: 200, description: "Updated", schema: "Post" }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "getPost",
      method: "GET",
      route: "posts/{postId}",
      endpoint: getPost,
      doc: {
        summary: "Get a post with its author's username and counts",
        request: "Q2",
        success: [
          { status: 200, description: "The post", schema: "Post" },
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
      endpoint: deletePost,
      doc: {
        summary: "Delete your post, its comments and likes (idempotent)",
        success: [{ status: 204, description: "Deleted" }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "createComment",
      method: "POST",
      route: "posts/{postId}/comments",
      endpoint: createComment,
      doc: {
        summary: "Comment on a post",
        request: "C3",
        success: [{ status: 201, description: "Created (or the first result again, for a repeated Idempotency-Key)", schema: "Comment" }],
        errors: [...WRITE_ERRORS, 422],
        headers: CONDITIONS,
        responseHeaders: ["Idempotent-Replayed"],
      },
    },
    {
      name: "listComments",
      method: "GET",
      route: "posts/{postId}/comments",
      endpoint: listComments,
      doc: list("A post's comments, oldest first", "Q4", "CommentPage"),
    },
    {
      name: "likePost",
      method: "POST",
      route: "posts/{postId}/likes",
      endpoint: likePost,
      doc: {
        summary: "Like a post (once per user)",
        request: "C4",
        success: [
          { status: 201, description: "Liked", schema: "Like" },
          { status: 200, description: "Already liked: nothing changed", schema: "Like" },
        ],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    {
      name: "unlikePost",
      method: "DELETE",
      route: "posts/{postId}/likes",
      endpoint: unlikePost,
      doc: {
        summary: "Take your like back",
        request: "C4",
        success: [{ status: 204, description: "Unliked" }],
        errors: WRITE_ERRORS,
        headers: CONDITIONS,
      },
    },
    { name: "listLikes", method: "GET", route: "posts/{postId}/likes", endpoint: listLikes, doc: list("A post's likes", "Q5", "LikePage") },
    {
      name: "getFeed",
      method: "GET",
      route: "feed",
      endpoint: getFeed,
      doc: {
        summary: "The newest posts in short form",
        request: "Q6",
        success: [
          { status: 200, description: "The feed", schema: "Feed" },
          { status: 304, description: "Not modified" },
        ],
        errors: [400, 412, ...STORE],
        headers: CONDITIONS,
        responseHeaders: ["Cache-Control"],
      },
    },
    {
      name: "search",
      method: "GET",
      route: "search",
      endpoint: search,
      doc: {
        summary: "Posts that hold any of the words in q, most relevant first (title weighted above content), each with a snippet",
        readsSeveralPartitions: "a query over every partition of posts: the words of all posts are in all of them (docs/search.md)",
        success: [
          { status: 200, description: "One page of results", schema: "SearchPage" },
          { status: 304, description: "Not modified (If-None-Match)" },
        ],
        errors: [400, 412, ...STORE],
        headers: CONDITIONS,
      },
    },
    {
      name: "getOpenApi",
      method: "GET",
      route: "openapi.json",
      endpoint: openApiEndpoint(() => routes),
      doc: {
        summary: "This description of the API (OpenAPI 3.1)",
        success: [
          { status: 200, description: "The OpenAPI document", schema: "OpenApiDocument" },
          { status: 304, description: "Not modified" },
        ],
        errors: [412],
        headers: CONDITIONS,
        responseHeaders: ["Cache-Control"],
      },
    },
  ] satisfies RouteEntry[]
).map(hosted);
