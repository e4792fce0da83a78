// The root's tests build durable functions and triggers for the local host as its own tests do: with the package's helpers.
export { durableFunctions, type ActivityHandler, type EntityHandler } from "../../packages/local-host/test/support/durable-functions";
export { watchedTrigger } from "../../packages/local-host/test/support/watched";
