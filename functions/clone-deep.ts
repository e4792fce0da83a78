// lodash's deep copy, bundled into a file of its own (dist/deploy/clone-deep.js): what
// functions/durable-client-clone.ts loads when the app first makes a durable client.
export { default } from "lodash/cloneDeep";
