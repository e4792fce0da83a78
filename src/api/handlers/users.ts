import { forbidden, notFound } from "../../model/errors";
import * as lists from "../../store/lists";
import * as users from "../../store/users";
import type { StoredUser } from "../../store/users";
import { endpoint } from "../http";
import { pagedList } from "../pagination";
import { userBody } from "../schemas";

const publicUser = (user: StoredUser) => ({ id: user.userId, username: user.username });

/** POST /users — C1: the caller creates their own profile. */
export const createUser = endpoint(async (call) => {
  const userId = await call.caller();
  const { username } = await call.body(userBody);
  call.requirePreconditions(undefined);
  const user = await users.createUser(userId, username);
  return { status: 201, body: publicUser(user), etag: user._etag, location: `/api/users/${encodeURIComponent(userId)}` };
});

/** PUT /users/{userId} — C1: only that user may change their username. */
export const updateUser = endpoint(async (call) => {
  const caller = await call.caller();
  const userId = call.param("userId");
  if (caller !== userId) throw forbidden("You may only edit your own profile.");
  const { username } = await call.body(userBody);
  const user = await users.renameUser(userId, username, call.writePreconditions(), (message) => call.context.warn(message));
  return { status: 200, body: publicUser(user), etag: user._etag };
});

/** GET /users/{userId} — Q1. */
export const getUser = endpoint(async (call) => {
  const userId = call.param("userId");
  const user = await users.readUser(userId);
  if (!user) throw notFound(`User '${userId}' does not exist.`);
  return { status: 200, body: publicUser(user), etag: user._etag };
});

/** GET /users/{userId}/posts — Q3: short-form posts, newest first. */
export const listUserPosts = endpoint(async (call) => {
  const userId = call.param("userId");
  return pagedList(call, "users", `users/${userId}/posts`, `User '${userId}' does not exist.`, (limit, after) => lists.listUserPosts(userId, limit, after));
});
