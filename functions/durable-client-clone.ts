// durable-functions' deep copy as the bundle gives it (scripts/bundle.ts points the package's
// `lodash/cloneDeep` here). durable-functions copies a durable client's binding data with it,
// and nothing else, and only on a local host (no WEBSITE_HOSTNAME, or 0.0.0.0), to point the
// data's URLs at the host: in Azure it never copies. lodash's copy is some 70 modules, and one
// of them asks Node.js for its internal `util` binding as it loads: about 7 ms of every cold
// start. It is bundled apart (dist/deploy/clone-deep.js) and read with the first copy.
const cloneDeep = <T>(value: T): T =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require("./clone-deep") as typeof import("./clone-deep")).default(value);

// durable-functions calls what `require("lodash/cloneDeep")` gives it, as lodash's module exports it.
export = cloneDeep;
