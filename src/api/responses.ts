import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import * as z from "zod";
import { PROBLEM_TYPES } from "../model/errors";
import { LIMITS } from "../model/limits";

// `.openapi(name)` makes each shape one named component that the document refers to. The
// extension reads only `ZodType` (it adds `.openapi` to its prototype). Handed the namespace
// itself, the bundler would keep every member of it, zod's 60 locales among them (0.55 MiB of
// the deployable bundle); the app imports zod as `import * as z`, whose members it can shake.
extendZodWithOpenApi({ ZodType: z.ZodType } as typeof z);

/**
 * What the API answers, as zod schemas: the OpenAPI document is generated from them, and the
 * contract test validates every real response against that document.
 */
const date = z.string().datetime({ offset: true });
const count = z.number().int().min(0);

export const userResponse = z.object({ id: z.string(), username: z.string() }).strict().openapi("User");

const postFields = {
  id: z.string(),
  type: z.literal("post"),
  postId: z.string(),
  userId: z.string(),
  /** The author's current username (denormalized, kept right by the pipeline). */
  userUsername: z.string(),
  title: z.string(),
  content: z.string(),
  commentCount: count,
  likeCount: count,
  creationDate: date,
  updatedDate: date.optional(),
};

export const postResponse = z.object(postFields).strict().openapi("Post");

/** A post in short form (Q3, Q6): content cut to 200 UTF-16 units. */
export const shortPostResponse = z
  .object({ ...postFields, content: z.string().max(LIMITS.shortContentLength) })
  .strict()
  .openapi("ShortPost");

/** A search result: the post in short form, and a stretch of its content around the first word found, with where the words are in it. */
export const searchHitResponse = z
  .object({
    ...postFields,
    content: z.string().max(LIMITS.shortContentLength),
    snippet: z
      .object({
        text: z.string(),
        marks: z.array(z.tuple([z.number().int().min(0), z.number().int().min(0)])).describe("[start, end) of each word found, in UTF-16 code units of text"),
      })
      .strict(),
  })
  .strict()
  .openapi("SearchHit");

export const commentResponse = z
  .object({
    id: z.string(),
    type: z.literal("comment"),
    postId: z.string(),
    userId: z.string(),
    userUsername: z.string(),
    content: z.string(),
    creationDate: date,
  })
  .strict()
  .openapi("Comment");

export const likeResponse = z
  .object({ id: z.string(), type: z.literal("like"), postId: z.string(), userId: z.string(), userUsername: z.string(), creationDate: date })
  .strict()
  .openapi("Like");

/** One page of a list; `continuationToken` is null on the last page. */
export const pageOf = <T extends z.ZodTypeAny>(item: T) => z.object({ items: z.array(item), continuationToken: z.string().nullable() }).strict();

export const feedResponse = z.object({ items: z.array(shortPostResponse).max(LIMITS.pageSize.max) }).strict();

/** RFC 9457 problem details; `errors` names each invalid field, header or parameter of a 400. */
export const problemDetails = z
  .object({
    type: z.enum(PROBLEM_TYPES).openapi({
      description: "about:blank when the status says it all (RFC 9457 4.2.1); otherwise one of the API's own problem types, described in docs/api.md.",
    }),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() }).strict()).optional(),
  })
  .strict()
  .openapi("Problem");

/** Where an account's erasure stands (GET /api/users/{userId}/erasure); the counts are what it has removed so far. */
export const erasureResponse = z
  .object({
    userId: z.string(),
    status: z.enum(["running", "completed"]),
    requestedDate: date,
    completedDate: date.optional(),
    progress: z.object({ posts: count, comments: count, likes: count, documents: count }).strict(),
  })
  .strict()
  .openapi("Erasure");

/**
 * One page of a user's data export (GET /api/users/{userId}/export): the profile on the first
 * page, then their posts (newest first), then what they wrote on posts (their own and others'),
 * a post at a time (one with more comments than a page holds, in parts). Fetch pages with
 * `continuationToken` until it is null; together they are the whole export.
 */
export const exportPageResponse = z
  .object({
    format: z.literal("blog-export/1"),
    userId: z.string(),
    exportedAt: date,
    profile: z.object({ id: z.string(), username: z.string(), creationDate: date }).strict().optional(),
    posts: z.array(postResponse),
    writing: z.array(
      z
        .object({
          postId: z.string(),
          comments: z.array(z.object({ id: z.string(), content: z.string(), creationDate: date }).strict()),
          likedDate: date.nullable(),
        })
        .strict(),
    ),
    continuationToken: z.string().nullable(),
  })
  .strict()
  .openapi("ExportPage");

/** The success answers by name, as the route table names them (`OperationDoc.success`). */
export const RESPONSES = {
  User: userResponse,
  Post: postResponse,
  Comment: commentResponse,
  Like: likeResponse,
  Feed: feedResponse,
  ShortPostPage: pageOf(shortPostResponse),
  SearchPage: pageOf(searchHitResponse),
  CommentPage: pageOf(commentResponse),
  LikePage: pageOf(likeResponse),
  Erasure: erasureResponse,
  ExportPage: exportPageResponse,
  OpenApiDocument: z.object({ openapi: z.string() }).passthrough(),
} satisfies Record<string, z.ZodTypeAny>;

export type ResponseName = keyof typeof RESPONSES;
