// The platform's floor for the read routes (bench/floors.ts): a Functions app of its own on the
// same local host and invocation model as the API, whose every route makes the Cosmos DB calls
// the API's route makes (through the same store functions, so the same requests) and answers
// the bytes the API answered for that path, captured beforehand. Nothing of the API's own:
// no validation, no auth, no telemetry of its own, no shaping of the answer.
import { readFileSync } from "node:fs";
import { app, type HttpRequest, type HttpResponseInit } from "@azure/functions";
import { createStore } from "../../src/store/client";
import { listComments, listLikes, listUserPosts } from "../../src/store/lists";
import { readPost } from "../../src/store/posts";
import { readUser } from "../../src/store/users";

/** An answer of the API, captured: what the floor sends back for the same path. */
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
  const captured = answers[new URL(request.url).pathname];
  return captured ? { status: captured.status, headers: captured.headers, body: captured.body } : { status: 404 };
}

/** A GET route that makes `call`, then answers what the API answered for the path. */
function floor(name: string, route: string, call: (request: HttpRequest) => Promise<unknown>): void {
  app.http(name, {
    route,
    methods: ["GET"],
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
