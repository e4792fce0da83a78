// The platform's floor for the read routes (bench/floors.ts): a Functions app of its own on the
// same local host and invocation model as the API, whose every route makes the Cosmos DB calls
// the API's route makes (through the same store functions, so the same requests) and answers
// the bytes the API answered for that method and path, captured beforehand. Nothing of the API's
// own: no validation, no auth (a write's caller is read from its token unverified), no telemetry
// of its own, no shaping of the answer.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { decodeJwt } from "jose";
import { createStore } from "../../src/store/client";
import { listComments, listLikes, listUserPosts } from "../../src/store/lists";
import { createComment, createPost, likePost, readPost } from "../../src/store/posts";
import { readUser, renameUser, requireProfile } from "../../src/store/users";

/** An answer of the API, captured: what the floor sends back for the same method and path. */
export interface CapturedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const answers = JSON.parse(readFileSync(process.env.FLOOR_ANSWERS!, "utf8")) as Record<string, CapturedAnswer>;
const store = createStore({ cosmos: { endpoint: process.env.COSMOS_ENDPOINT!, key: process.env.COSMOS_KEY, databaseName: "blog" } });
/** The lists' page size when the request names none, as the API's. */
const PAGE = 20;

function answer(request: HttpRequest): HttpResponseInit {
  const captured = answers[`${request.method} ${new URL(request.url).pathname}`];
  return captured ? { status: captured.status, headers: captured.headers, body: captured.body } : { status: 404 };
}

/** The caller a write is made for: its token's subject, taken as it is (the API verifies it; the floor does not). */
const callerOf = (request: HttpRequest): string => decodeJwt(request.headers.get("authorization")!.replace(/^Bearer /, "")).sub!;

/** A route that makes `call`, then answers what the API answered for the method and path. */
function floor(name: string, route: string, call: (request: HttpRequest) => Promise<unknown>, method: "GET" | "POST" | "PUT" = "GET"): void {
  app.http(name, {
    route,
    methods: [method],
    authLevel: "anonymous",
    handler: async (request) => {
      await call(request);
      return answer(request);
    },
  });
}

floor("floorUser", "users/{userId}", (request) => readUser(store, request.params.userId));
floor("floorPost", "posts/{postId}", (request) => readPost(store, request.params.postId));
floor("floorUserPosts", "users/{userId}/posts", (request) => listUserPosts(store, request.params.userId, PAGE));
floor("floorComments", "posts/{postId}/comments", (request) => listComments(store, request.params.postId, PAGE));
floor("floorLikes", "posts/{postId}/likes", (request) => listLikes(store, request.params.postId, PAGE));
// Q6 as the API serves it under load: from its micro-cache, with no Cosmos DB call.
floor("floorFeed", "feed", async () => undefined);

// The writes, as the API's handlers make them: the profile read, then the store call.
floor(
  "floorRename",
  "users/{userId}",
  async (request) => renameUser(store, request.params.userId, ((await request.json()) as { username: string }).username, () => undefined),
  "PUT",
);
floor(
  "floorCreatePost",
  "posts",
  async (request) =>
    createPost(store, randomUUID(), await requireProfile(store, callerOf(request)), (await request.json()) as { title: string; content: string }),
  "POST",
);
floor(
  "floorComment",
  "posts/{postId}/comments",
  async (request) =>
    createComment(
      store,
      request.params.postId,
      await requireProfile(store, callerOf(request)),
      randomUUID(),
      ((await request.json()) as { content: string }).content,
    ),
  "POST",
);
floor("floorLike", "posts/{postId}/likes", async (request) => likePost(store, request.params.postId, await requireProfile(store, callerOf(request))), "POST");
