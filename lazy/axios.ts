// Stands in for axios in durable-functions (lazy/splits.ts). durable-functions calls axios only
// through `axios.create`, in a DurableClient's constructor, and a cold start that serves a read
// never makes one: axios, with form-data, proxies and Node's http2 and zlib, loads then.
import type { CreateAxiosDefaults } from "axios";

export default {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  create: (config?: CreateAxiosDefaults) => (require("axios") as typeof import("axios")).create(config),
};
