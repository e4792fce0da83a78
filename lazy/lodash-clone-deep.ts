// Stands in for lodash's deep copy in durable-functions (lazy/splits.ts). durable-functions copies
// a durable client's binding data with it, and only on a local host (no WEBSITE_HOSTNAME, or
// 0.0.0.0), to point the data's URLs at the host: in Azure it never copies. lodash's copy is
// dozens of modules, one of which asks Node.js for its internal `util` binding as it loads.
const cloneDeep = <T>(value: T): T =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require("lodash/cloneDeep") as typeof import("lodash/cloneDeep"))(value);

// durable-functions calls what `require("lodash/cloneDeep")` gives it, as lodash's module exports it.
export = cloneDeep;
